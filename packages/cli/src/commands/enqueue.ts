import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'enqueue (being built)',
  async run(_args, io) {
    io.stderr('postback enqueue: being built\n');
    return 1;
  },
};
