import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'status (being built)',
  async run(_args, io) {
    io.stderr('postback status: being built\n');
    return 1;
  },
};
