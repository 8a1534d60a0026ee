import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'worker (being built)',
  async run(_args, io) {
    io.stderr('postback worker: being built\n');
    return 1;
  },
};
