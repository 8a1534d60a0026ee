/**
 * Next.js configuration of the example shop. The shared shop kit is TypeScript source, so Next
 * compiles it; the postback packages resolve to their built `dist` (built by the repository's
 * `prepare`). The packages that open SQLite (`node:sqlite`) stay outside the server bundle and are
 * loaded by Node at run time, with the core and client they share, so there is one copy of each.
 */

/** @type {import('next').NextConfig} */
const nextConfig = {
  transpilePackages: ['@postback/example-shop-kit'],
  serverExternalPackages: ['@postback/sqlite', '@postback/core', '@postback/client'],
  poweredByHeader: false,
};

export default nextConfig;
