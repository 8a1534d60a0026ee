/**
 * @postback/sandbox/testing — fixtures for the tests and benchmarks of code that delivers to the ad
 * service: a sandbox with one account and one s2s campaign, and helpers over its control API.
 */

export type { SandboxConversionReport, SandboxFaults } from '../control-client.ts';
export {
  prepareSandboxWorld,
  type SandboxWorld,
  type SandboxWorldOptions,
  startSandboxWorld,
} from './sandbox-world.ts';
