/**
 * @postback/next — click capture for Next.js 15 and 16: the proxy (`proxy.ts`, or `middleware.ts`)
 * captures the click and forwards it to the same request's handlers; readers get it in route handlers,
 * server actions and Pages API routes. Next is a peer dependency.
 */

export type { ClickStamp, ConfirmOrderResult, OrderToConfirm } from '@postback/core';
export {
  type ApiRequestLike,
  type ClickSource,
  createPostback,
  createPostbackProxy,
  type NextPostback,
  type NextPostbackOptions,
  type NextPostbackOptionsSource,
  type PostbackProxy,
} from './create-postback.ts';
export { POSTBACK_CLICK_HEADER } from './forwarded-click.ts';
