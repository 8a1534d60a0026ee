/** Types for the `koa2` alias (Koa 2 installed side by side with Koa 3 for the tests). */
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
