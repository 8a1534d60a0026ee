import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'migrate (being built)',
  async run(_args, io) {
    io.stderr('postback migrate: being built\n');
    return 1;
  },
};
