/**
 * `fromPrisma`: postback's confirm and refund inside Prisma's interactive `$transaction`, on
 * `@prisma/adapter-pg` (Prisma 7's TypeScript query compiler: no query engine binary).
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll } from 'vitest';
import { fromPrisma, type PrismaLike } from '../src/adapters/prisma.ts';
import { describeAdapter } from './adapter-harness.ts';
import { TEST_PG_URL } from './pg-test-db.ts';

// `prisma generate` only needs the schema engine to exist, never runs it; npm here runs no install
// scripts, so it was never downloaded and the CLI would try to fetch it. Any existing file satisfies
// the check; a real engine, when installed, is used as is.
const schema = fileURLToPath(new URL('./prisma/schema.prisma', import.meta.url));
execFileSync(
  process.execPath,
  [createRequire(import.meta.url).resolve('prisma/build/index.js'), 'generate', `--schema=${schema}`],
  {
    env: { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    stdio: 'pipe',
  },
);

/** The generated client, as far as this test uses it (typed here: .generated exists only while this file runs). */
interface TestPrismaClient {
  $transaction<R>(work: (tx: PrismaLike & TestPrismaTx) => Promise<R>): Promise<R>;
  $disconnect(): Promise<void>;
}
interface TestPrismaTx {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}
const generated = './prisma/.generated/client.ts';
// Removed afterwards, so neither the repository's tsc nor biome ever reads generated code.
afterAll(() => rmSync(new URL('./prisma/.generated', import.meta.url), { recursive: true, force: true }));
const { PrismaClient } = (await import(generated)) as {
  PrismaClient: new (options: { adapter: PrismaPg }) => TestPrismaClient;
};

describeAdapter(
  'Prisma',
  () => {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: TEST_PG_URL, max: 2 }) });
    return {
      async transaction(schemaName, work) {
        await prisma.$transaction(async (tx) => {
          await work({
            db: fromPrisma(tx),
            insertOrder: async (id, totalMicros) => {
              await tx.$executeRawUnsafe(
                `INSERT INTO "${schemaName}".orders (id, total_micros) VALUES ($1, $2)`,
                id,
                totalMicros,
              );
            },
          });
        });
      },
      close: () => prisma.$disconnect(),
    };
  },
  { multiStatement: false },
);
