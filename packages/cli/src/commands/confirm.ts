import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'confirm (being built)',
  async run(_args, io) {
    io.stderr('postback confirm: being built\n');
    return 1;
  },
};
