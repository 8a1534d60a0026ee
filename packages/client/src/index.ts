/** @postback/client — typed client for every /v1 endpoint of the ad service. */
export * from './errors.ts';
