/**
 * The Next 16 shop's configuration, plus one alias: `@postback/next` lives in packages/next, where
 * Node's resolution of its `next/server.js` and `next/headers.js` finds the repository's Next 16. Here
 * they must be this app's Next 15 (one `NextResponse` class, one request scope for `headers()`), as
 * they are in a shop that installs the package from the registry.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import shopConfig from '../next-shop/next.config.mjs';

const nextDir = dirname(createRequire(import.meta.url).resolve('next/package.json'));

/** @type {import('next').NextConfig} */
const nextConfig = {
  ...shopConfig,
  // Next 15 builds with webpack by default; its more specific aliases come first and keep precedence.
  webpack(config) {
    config.resolve.alias = { ...config.resolve.alias, next: nextDir };
    return config;
  },
};

export default nextConfig;
