/**
 * The page's static files (in `public/`), served from the package itself: the HTML, its stylesheet, its
 * icon and its JavaScript modules. Only the names listed here are served; each is read once.
 */
import { readFile } from 'node:fs/promises';
import { answer } from './answers.ts';

const SCRIPT = 'text/javascript; charset=utf-8';

/** The files the page asks for under `assets/`, by name, with their content type. */
const ASSETS: Readonly<Record<string, string>> = {
  'app.js': SCRIPT,
  'access.js': SCRIPT,
  'actions.js': SCRIPT,
  'api.js': SCRIPT,
  'charts.js': SCRIPT,
  'dom.js': SCRIPT,
  'format.js': SCRIPT,
  'held.js': SCRIPT,
  'job.js': SCRIPT,
  'jobs.js': SCRIPT,
  'overview.js': SCRIPT,
  'refresh.js': SCRIPT,
  'style.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

const PUBLIC_DIR = new URL('../public/', import.meta.url);
const cache = new Map<string, Promise<string>>();

function publicFile(name: string): Promise<string> {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFile(new URL(name, PUBLIC_DIR), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** `name` when it is one of the page's files, else null. */
export const assetName = (name: string): string | null => (Object.hasOwn(ASSETS, name) ? name : null);

/** The page (`index.html`) or one of its files, without a body for HEAD. */
export async function servePage(name: string, method: string): Promise<Response> {
  const type =
    name === 'index.html' ? 'text/html; charset=utf-8' : (ASSETS[name] ?? 'application/octet-stream');
  return answer(method === 'HEAD' ? null : await publicFile(name), 200, type);
}
