import type { Command } from '../main.ts';

export const command: Command = {
  summary: 'Run the local sandbox of the ad service',
  async run(_args, io) {
    io.stderr('postback sandbox: being built\n');
    return 1;
  },
};
