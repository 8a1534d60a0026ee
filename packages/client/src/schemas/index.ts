/** Every zod schema of the wire (requests, responses and their building blocks), for the client and the sandbox. */
export * from './common.ts';
export * from './requests.ts';
export * from './responses.ts';
