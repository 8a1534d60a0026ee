/**
 * The `Host` rule that keeps DNS rebinding out. A page on another site can make the operator's browser
 * resolve its own name to 127.0.0.1 and read a loopback dashboard as same-origin; the one thing such a
 * request cannot hide is the `Host` it names (the attacker's). So a dashboard reached on a loopback
 * address answers only to loopback names (`localhost`, `127.x.x.x`, `[::1]`) and the names configured in
 * `allowedHosts`; with `allowedHosts` given, every request is held to it, whatever address it came in on.
 * A `Host` that is not a valid host at all is a 400 on any address.
 */
import { ClientError } from './answers.ts';

/** A host name or address as `Host` names it (lowercase, no trailing dot), and its port if any. */
export interface HostName {
  hostname: string;
  port: number | null;
}

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*\.?$/;
const IPV6 = /^\[[0-9a-f:.]{2,45}\]$/;

/**
 * Parses a `Host` value (`name`, `name:port`, `1.2.3.4:80`, `[::1]:80`); null when it is not one (a
 * space, a bracket left open, a port beyond 65535, a path, an escape, a name that is not ASCII).
 *
 * @example
 * ```ts
 * parseHost('LocalHost:4020'); // { hostname: 'localhost', port: 4020 }
 * parseHost('x:99999999'); // null
 * ```
 */
export function parseHost(value: string): HostName | null {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(value.toLowerCase());
  if (match === null) return null;
  const [, host = '', portText] = match;
  const port = portText === undefined ? null : Number(portText);
  if (port !== null && port > 65_535) return null;
  if (host.startsWith('[') ? !IPV6.test(host) : host.length === 0 || host.length > 253 || !NAME.test(host)) {
    return null;
  }
  try {
    new URL(`http://${host}/`); // what a URL parser refuses (`1.2.3.4.5`, `[zz]`), no server can be named by
  } catch {
    return null;
  }
  return { hostname: host.endsWith('.') ? host.slice(0, -1) : host, port };
}

/**
 * Whether `address` (a socket's address as Node gives it) is a loopback address: 127.0.0.0/8, `::1`,
 * or an IPv4-mapped loopback (`::ffff:127.0.0.1`).
 *
 * @example
 * ```ts
 * isLoopbackAddress(req.socket.localAddress); // true when the server was reached on 127.0.0.1
 * ```
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** Whether a parsed host name is one of this machine's loopback names. */
export const isLoopbackName = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || isLoopbackAddress(hostname);

/**
 * Checks a request's `Host` (`value`, null when it has none) against the rule above.
 *
 * @throws {ClientError} 400 for a `Host` that is not a host, 421 for one this dashboard does not answer to.
 * @example
 * ```ts
 * checkHost('evil.example:4020', { allowedHosts: [], localAddress: '127.0.0.1' }); // throws 421
 * ```
 */
export function checkHost(
  value: string | null,
  where: { allowedHosts: readonly string[]; localAddress: string | undefined },
): void {
  if (value === null) return; // HTTP/1.0 without Host: no browser sends that, so no page rebinds it.
  const host = parseHost(value);
  if (host === null) throw new ClientError(400, 'the Host header is not a valid host');
  const guarded = where.allowedHosts.length > 0 || isLoopbackAddress(where.localAddress);
  if (!guarded || isLoopbackName(host.hostname) || where.allowedHosts.includes(host.hostname)) return;
  throw new ClientError(
    421,
    'this dashboard answers only to its own address and the names in allowedHosts (a DNS rebinding guard)',
  );
}
