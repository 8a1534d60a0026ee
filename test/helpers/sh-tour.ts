/**
 * Replays the `curl` tours of the READMEs without a shell: a small interpreter of the subset of `sh` they
 * are written in — variables (`NAME=value`, `$NAME`, `${NAME}`), single and double quotes, backslash
 * line continuations, comments, command substitution `$(…)`, pipes, and three commands: `curl` (`-s`,
 * `-i`, `-X`, `-H`, `-d`, one URL), `echo` and `jq -r <path>` (`.a.b`, `.a[0]`). A command run in the
 * background (`… &`, starting a server) is skipped: the test starts its own. Anything else throws, so a
 * README cannot use a form the replay does not check. Hosts are rewritten through `hosts`, so a tour
 * written for `127.0.0.1:4010` runs against a server on an ephemeral port.
 */

type Part = { lit: string } | { name: string } | { sub: Script };
type Word = Part[];
interface Pipeline {
  commands: Word[][];
  background: boolean;
}
type Script = Pipeline[];

/** One HTTP request the tour made, with its answer. */
export interface TourRequest {
  method: string;
  url: string;
  status: number;
  body: string;
}

/** What a replay leaves: the variables set, every request and the output of the top-level commands. */
export interface TourResult {
  vars: Map<string, string>;
  requests: TourRequest[];
  output: string[];
}

class Parser {
  i = 0;
  readonly s: string;
  constructor(s: string) {
    this.s = s;
  }

  script(closing: string | null): Script {
    const script: Script = [];
    let commands: Word[][] = [];
    let words: Word[] = [];
    const endCommand = () => {
      if (words.length > 0) commands.push(words);
      words = [];
    };
    const endPipeline = (background: boolean) => {
      endCommand();
      if (commands.length > 0) script.push({ commands, background });
      commands = [];
    };
    while (this.i < this.s.length) {
      const c = this.s[this.i] ?? '';
      if (c === ' ' || c === '\t') this.i++;
      else if (c === '\\' && this.s[this.i + 1] === '\n') this.i += 2;
      else if (c === '#') while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
      else if (c === '\n' || c === ';') {
        this.i++;
        endPipeline(false);
      } else if (c === '|') {
        this.i++;
        endCommand();
      } else if (c === '&') {
        this.i++;
        endPipeline(true);
      } else if (c === closing) {
        this.i++;
        endPipeline(false);
        return script;
      } else words.push(this.word(closing));
    }
    if (closing !== null) throw new Error(`unclosed $( in: ${this.s}`);
    endPipeline(false);
    return script;
  }

  word(closing: string | null): Word {
    const parts: Part[] = [];
    const lit = (text: string) => parts.push({ lit: text });
    while (this.i < this.s.length) {
      const c = this.s[this.i] ?? '';
      if (' \t\n;|&'.includes(c) || c === closing) break;
      this.i++;
      if (c === "'") {
        const end = this.s.indexOf("'", this.i);
        if (end < 0) throw new Error('unclosed single quote');
        lit(this.s.slice(this.i, end));
        this.i = end + 1;
      } else if (c === '"') {
        while (this.s[this.i] !== '"') {
          if (this.i >= this.s.length) throw new Error('unclosed double quote');
          const d = this.s[this.i++] ?? '';
          if (d === '\\' && '$`"\\\n'.includes(this.s[this.i] ?? '')) {
            const e = this.s[this.i++] ?? '';
            if (e !== '\n') lit(e);
          } else if (d === '$') parts.push(this.dollar());
          else lit(d);
        }
        this.i++;
      } else if (c === '\\') lit(this.s[this.i++] ?? '');
      else if (c === '$') parts.push(this.dollar());
      else lit(c);
    }
    return parts;
  }

  /** After a `$`: a variable, `${NAME}` or a command substitution. */
  dollar(): Part {
    if (this.s[this.i] === '(') {
      this.i++;
      return { sub: this.script(')') };
    }
    const braced = this.s[this.i] === '{';
    const m = /^[A-Za-z_]\w*/.exec(this.s.slice(this.i + (braced ? 1 : 0)));
    if (!m) throw new Error(`unsupported $ form at: ${this.s.slice(this.i - 1, this.i + 20)}`);
    this.i += m[0].length + (braced ? 2 : 0);
    return { name: m[0] };
  }
}

/** A jq path (`.`, `.a.b`, `.a[0].b`) applied to a JSON value. */
function jqPath(filter: string, value: unknown): unknown {
  if (!/^\.(?:[A-Za-z_]\w*|\[\d+\])?(?:\.[A-Za-z_]\w*|\[\d+\])*$/.test(filter))
    throw new Error(`unsupported jq filter ${filter}`);
  let current = value;
  for (const [, key, index] of filter.matchAll(/\.?([A-Za-z_]\w*)|\[(\d+)\]/g)) {
    if (current === null || typeof current !== 'object') return null;
    current = (current as Record<string, unknown>)[key ?? Number(index)] ?? null;
  }
  return current;
}

/**
 * Runs the `sh` text of a README tour. `hosts` maps `host:port` as written (`127.0.0.1:4010`) to where
 * it really is; unmapped hosts are refused (a tour never leaves the machine).
 */
export async function replayTour(text: string, hosts: Record<string, string>): Promise<TourResult> {
  const vars = new Map<string, string>();
  const requests: TourRequest[] = [];
  const output: string[] = [];

  const expand = async (word: Word): Promise<string> => {
    let out = '';
    for (const part of word) {
      if ('lit' in part) out += part.lit;
      else if ('name' in part) {
        const value = vars.get(part.name);
        if (value === undefined) throw new Error(`$${part.name} is not set`);
        out += value;
      } else out += (await runScript(part.sub)).join('').replace(/\n+$/, '');
    }
    return out;
  };

  const curl = async (args: string[]): Promise<string> => {
    let method: string | undefined;
    let data: string | undefined;
    let include = false;
    let url: string | undefined;
    const headers: Record<string, string> = {};
    for (let k = 0; k < args.length; k++) {
      const a = args[k] ?? '';
      if (a === '-s') continue;
      if (a === '-i') include = true;
      else if (a === '-X') method = args[++k];
      else if (a.startsWith('-X')) method = a.slice(2);
      else if (a === '-H') {
        const [name = '', ...rest] = (args[++k] ?? '').split(':');
        headers[name.trim().toLowerCase()] = rest.join(':').trim();
      } else if (a === '-d') data = args[++k];
      else if (a.startsWith('-')) throw new Error(`unsupported curl flag ${a}`);
      else if (url === undefined) url = a;
      else throw new Error(`curl with two URLs: ${url} ${a}`);
    }
    if (url === undefined) throw new Error('curl without a URL');
    const parsed = new URL(/^https?:\/\//.test(url) ? url : `http://${url}`);
    const host = hosts[parsed.host] ?? hosts[parsed.host.replace(/^localhost:/, '127.0.0.1:')];
    if (host === undefined) throw new Error(`the tour calls ${parsed.host}, which the replay does not map`);
    parsed.host = host;
    method ??= data === undefined ? 'GET' : 'POST';
    if (data !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded'; // what curl -d sends
    const res = await fetch(parsed, { method, headers, ...(data === undefined ? {} : { body: data }) });
    const body = await res.text();
    requests.push({ method, url: parsed.href, status: res.status, body });
    if (!include) return body;
    const head = [...res.headers].map(([k, v]) => `${k}: ${v}\r\n`).join('');
    return `HTTP/1.1 ${res.status}\r\n${head}\r\n${body}`;
  };

  const run = async (argv: string[], stdin: string): Promise<string> => {
    const [command, ...args] = argv;
    if (argv.length === 1 && /^[A-Za-z_]\w*=/s.test(command ?? '')) {
      const eq = (command ?? '').indexOf('=');
      vars.set((command ?? '').slice(0, eq), (command ?? '').slice(eq + 1));
      return '';
    }
    switch (command) {
      case 'curl':
        return curl(args);
      case 'echo':
        return `${args.join(' ')}\n`;
      case 'jq': {
        if (args.length !== 2 || args[0] !== '-r')
          throw new Error(`unsupported jq call: jq ${args.join(' ')}`);
        const value = jqPath(args[1] ?? '', JSON.parse(stdin));
        return `${typeof value === 'string' ? value : JSON.stringify(value)}\n`;
      }
      default:
        throw new Error(`the replay does not run ${command}`);
    }
  };

  const runScript = async (script: Script): Promise<string[]> => {
    const outs: string[] = [];
    for (const pipeline of script) {
      if (pipeline.background) continue; // a server the tour starts: the test runs its own
      let stdin = '';
      for (const words of pipeline.commands) {
        const argv: string[] = [];
        for (const word of words) argv.push(await expand(word));
        stdin = await run(argv, stdin);
      }
      outs.push(stdin);
    }
    return outs;
  };

  output.push(...(await runScript(new Parser(text).script(null))));
  return { vars, requests, output };
}
