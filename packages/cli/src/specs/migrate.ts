/** The table of `postback migrate`. */
import type { CommandSpec } from '../spec.ts';

export const migrateSpec = {
  name: 'migrate',
  summary: 'Create or upgrade the PostgreSQL tables of postback',
  usage: ['postback migrate --pg URL [--schema NAME]', 'postback migrate --print [--schema NAME]'],
  description:
    "Creates or upgrades postback's tables (jobs, clicks) in a PostgreSQL schema. Safe to run again and\n" +
    'from several processes at once.',
  flags: {
    pg: {
      type: 'string',
      value: 'URL',
      help: 'PostgreSQL connection URL (postgres://user:password@host:5432/db); needed unless --print',
    },
    schema: {
      type: 'string',
      value: 'NAME',
      env: 'POSTBACK_PG_SCHEMA',
      help: 'schema to use (default postback); lowercase letters, digits and _,\nat most 48 characters',
    },
    print: {
      type: 'boolean',
      help: 'print the migration SQL instead of running it (for SQL-file migration tools)',
    },
  },
  exitCodes: '0 ok, 1 migration failed, 2 usage error, 3 cannot connect to the database.',
} as const satisfies CommandSpec;
