import type { OpenedBackend } from './index.ts';

export async function open(_target: string, _env: Record<string, string | undefined>): Promise<OpenedBackend> {
  throw new Error('the sqs backend is being built');
}
