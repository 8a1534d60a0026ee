/**
 * The HTTP side of the SQS emulator: one AWS JSON 1.0 request (`X-Amz-Target: AmazonSQS.<Operation>`)
 * turned into an operation on the emulator's state and its answer or error, served either through a nock
 * interceptor or by a real HTTP server on 127.0.0.1.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import nock from 'nock';
import { batch, changeVisibility, deleteMessage, receive, send } from './emulator-messages.ts';
import { type EmulatorState, SqsFault } from './emulator-state.ts';

/** An answer: HTTP status, body and headers. */
export type EmulatorResponse = [number, string, Record<string, string>];

/** Answers one request given its `X-Amz-Target`, its content type and its body. */
export type RequestHandler = (target: string, contentType: string, text: string) => Promise<EmulatorResponse>;

/** Handles one request against `state`: an SQS error becomes the JSON error answer AWS gives. */
export async function handleRequest(
  state: EmulatorState,
  target: string,
  contentType: string,
  text: string,
): Promise<EmulatorResponse> {
  const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() };
  try {
    if (!target.startsWith('AmazonSQS.'))
      throw new SqsFault('UnknownOperationException', `unknown target ${target}`);
    if (!contentType.startsWith('application/x-amz-json-1.0'))
      throw new SqsFault('SerializationException', `bad content type ${contentType}`);
    const operation = target.slice('AmazonSQS.'.length);
    const input = JSON.parse(text) as Record<string, unknown>;
    state.calls.push({ operation, input });
    const throttle = state.throttles.get(operation);
    if (throttle !== undefined && throttle.count > 0) {
      throttle.count -= 1;
      throw new SqsFault(throttle.code, 'Rate exceeded');
    }
    const output = await dispatch(state, operation, input);
    return [200, JSON.stringify(output), headers];
  } catch (err) {
    if (!(err instanceof SqsFault)) throw err;
    return [
      err.status,
      JSON.stringify({ __type: `com.amazonaws.sqs#${err.code}`, message: err.message }),
      { ...headers, 'x-amzn-query-error': `${err.queryCode};Sender` },
    ];
  }
}

function dispatch(state: EmulatorState, operation: string, input: Record<string, unknown>): unknown {
  switch (operation) {
    case 'SendMessage': {
      const queue = state.queue(input.QueueUrl);
      return send(state, queue, input, state.maxPayloadBytes);
    }
    case 'SendMessageBatch':
      return batch(
        state,
        operation,
        input,
        (queue, entry) => send(state, queue, entry, state.maxPayloadBytes),
        true,
      );
    case 'ReceiveMessage':
      return receive(state, input);
    case 'DeleteMessage':
      deleteMessage(state, state.queue(input.QueueUrl), String(input.ReceiptHandle));
      return {};
    case 'DeleteMessageBatch':
      return batch(state, operation, input, (queue, entry) => {
        deleteMessage(state, queue, String(entry.ReceiptHandle));
        return {};
      });
    case 'ChangeMessageVisibility':
      changeVisibility(
        state,
        state.queue(input.QueueUrl),
        String(input.ReceiptHandle),
        Number(input.VisibilityTimeout),
      );
      return {};
    case 'ChangeMessageVisibilityBatch':
      return batch(state, operation, input, (queue, entry) => {
        changeVisibility(state, queue, String(entry.ReceiptHandle), Number(entry.VisibilityTimeout));
        return {};
      });
    case 'GetQueueAttributes':
      return state.getAttributes(
        state.queue(input.QueueUrl),
        (input.AttributeNames as string[] | undefined) ?? [],
      );
    default:
      throw new SqsFault(
        'UnsupportedOperation',
        `${operation} is not emulated`,
        'AWS.SimpleQueueService.UnsupportedOperation',
      );
  }
}

/** Intercepts every POST to `endpoint` with nock and answers it with `handle`. */
export function interceptWithNock(endpoint: string, handle: RequestHandler): nock.Scope {
  return (
    nock(endpoint)
      .persist()
      .post('/')
      // nock 15 hands a reply function the fetch `Request` (it is built on @mswjs/interceptors).
      .reply(async (request: Request) => {
        const text = await request.clone().text();
        return handle(
          request.headers.get('x-amz-target') ?? '',
          request.headers.get('content-type') ?? '',
          text,
        );
      })
  );
}

/** Starts a keep-alive HTTP server on 127.0.0.1 (an ephemeral port) that answers with `handle`. */
export async function listenOnLoopback(handle: RequestHandler): Promise<Server> {
  const server: Server = createServer({ keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      handle(String(req.headers['x-amz-target'] ?? ''), String(req.headers['content-type'] ?? ''), text).then(
        ([status, body, headers]) => {
          res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
