// A host process using the Postgres store, driven by the process tests. Every mode prints `ready`
// once loaded and waits for `go` on stdin, so several children can start their work together.
//   write <url> <schema> <session> <leaseMs> <name>
//       acquire the session, then append batches of three records `<name>-<i>-0..2` forever,
//       printing `ack <i>` once each append has resolved; on a refused append print `refused <code>`
//       and exit
//   create <url> <schema> <session> <name>
//       create the session (print `created` or `exists`), acquire it (retrying while another holds
//       it), append one batch of three records `<name>-0-0..2`, release, print `done`
import { createInterface } from 'node:readline'
import type { UserMessage } from '@kode/protocol'
import { SessionError } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'

const [mode, url, schema, sessionId, ...rest] = process.argv.slice(2)
if (!mode || !url || !schema || !sessionId)
  throw new Error('usage: host-child <mode> <url> <schema> <session> ...')
const say = (line: string) => process.stdout.write(`${line}\n`)
const batch = (name: string, i: number): UserMessage[] =>
  [0, 1, 2].map((j) => ({
    role: 'user',
    id: `${name}-${i}-${j}`,
    createdAt: Date.now(),
    parts: [{ type: 'text', text: 'x'.repeat(512) }],
  }))

const lines = createInterface({ input: process.stdin })
say('ready')
await new Promise<void>((resolve) => lines.once('line', () => resolve()))

switch (mode) {
  case 'write':
    await write(rest[0]!, rest[1]!)
    break
  case 'create': {
    const [name] = rest
    const store = createPostgresSessionStore({ connectionString: url, schema, leaseMs: 5_000 })
    try {
      await store.create({ id: sessionId })
      say('created')
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_exists') throw error
      say('exists')
    }
    for (;;) {
      try {
        const lease = await store.acquire(sessionId)
        await lease.append(batch(name!, 0))
        await lease.release()
        break
      } catch (error) {
        if (!SessionError.is(error) || error.code !== 'session_locked') throw error
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    await store.close()
    say('done')
    process.exit(0)
    break
  }
  default:
    throw new Error(`unknown mode ${mode}`)
}

/** Appends batches under one lease until an append is refused (or the process is killed). */
async function write(leaseMs: string, name: string): Promise<void> {
  const store = createPostgresSessionStore({
    connectionString: url!,
    schema: schema!,
    leaseMs: Number(leaseMs),
  })
  const lease = await store.acquire(sessionId!)
  say('leased')
  for (let i = 0; ; i++) {
    try {
      await lease.append(batch(name, i))
    } catch (error) {
      say(`refused ${SessionError.is(error) ? error.code : String(error)}`)
      process.exit(0)
    }
    say(`ack ${i}`)
  }
}
