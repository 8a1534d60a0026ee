import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'refund (being built)',
  async run(_args, io) {
    io.stderr('postback refund: being built\n');
    return 1;
  },
};
