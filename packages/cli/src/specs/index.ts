/**
 * Every command's table, in the order `postback --help` lists them. Loading this loads no command and
 * no database driver.
 */
import type { CommandSpec } from '../spec.ts';
import { confirmSpec } from './confirm.ts';
import { dashboardSpec } from './dashboard.ts';
import { dlqSpec } from './dlq.ts';
import { doctorSpec } from './doctor.ts';
import { enqueueSpec } from './enqueue.ts';
import { heldSpec } from './held.ts';
import { jobSpec } from './job.ts';
import { jobsSpec } from './jobs.ts';
import { ledgerSpec } from './ledger.ts';
import { migrateSpec } from './migrate.ts';
import { pruneSpec } from './prune.ts';
import { reconcileSpec } from './reconcile.ts';
import { refundSpec } from './refund.ts';
import { sandboxSpec } from './sandbox.ts';
import { shadowSpec } from './shadow.ts';
import { statusSpec } from './status.ts';
import { workerSpec } from './worker.ts';

/** The tables of all commands. */
export const COMMAND_SPECS: readonly CommandSpec[] = [
  workerSpec,
  statusSpec,
  jobsSpec,
  jobSpec,
  dlqSpec,
  pruneSpec,
  confirmSpec,
  refundSpec,
  enqueueSpec,
  sandboxSpec,
  dashboardSpec,
  migrateSpec,
  doctorSpec,
  reconcileSpec,
  shadowSpec,
  heldSpec,
  ledgerSpec,
];
