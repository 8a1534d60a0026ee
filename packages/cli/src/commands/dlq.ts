import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'dlq (being built)',
  async run(_args, io) {
    io.stderr('postback dlq: being built\n');
    return 1;
  },
};
