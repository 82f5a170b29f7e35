import { RatchetError } from '../../core/errors.js';

/** How long the check waits for Redis to answer. */
const CHECK_TIMEOUT_MS = 5_000;

/** `url` with its password (if any) hidden, for messages. */
function shown(url: string): string {
  return url.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}

/**
 * Refuses (`network`) when Redis at `url` does not answer a PING within a few seconds. BullMQ's
 * and ioredis's clients retry a connection forever (right for a queue that must outlive a Redis
 * restart), so without this a wrong URL or a stopped server would leave a run or a worker
 * waiting in silence.
 */
export async function requireRedis(url: string, password?: string): Promise<void> {
  // Loaded here, not at the CLI's start: every command imports this file, few use Redis.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    ...(password === undefined ? {} : { password }),
    lazyConnect: true,
    connectTimeout: CHECK_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // The socket's own error (ECONNREFUSED...) says more than the "Connection is closed" that follows.
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const why = cause ?? (error instanceof Error ? error : new Error(String(error)));
    throw new RatchetError('network', `Redis at ${shown(url)} does not answer: ${why.message}`, {
      hint: 'Start it (redis-server), or pass the URL it listens on: --queue redis://host:port[/db].',
      cause: error,
    });
  } finally {
    client.disconnect();
  }
}
