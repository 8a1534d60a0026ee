/** Types for the `express4` alias (Express 4 installed side by side with Express 5 for the tests). */
declare module 'express4' {
  import express from 'express';
  export default express;
}
