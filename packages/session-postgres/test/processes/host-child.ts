// A host process using the Postgres store, driven by the process tests. Every mode prints `ready`
// once loaded and waits for `go` on stdin, so several children can start their work together.
//   write <url> <schema> <session> <leaseMs> <name>
//       acquire the session, then append batches of three records `<name>-<i>-0..2` forever,
//       printing `ack <i>` once each append has resolved; on a refused append print `refused <code>`
//       and exit
//   create <url> <schema> <session> <name>
//       create the session (print `created` or `exists`), acquire it (retrying while another holds
//       it), append one batch of three records `<name>-0-0..2`, release, print `done`
//   batches <url> <schema> <session> <leaseMs> <name>
//       acquire the session; for each line `<n>` on stdin append n more batches of three records
//       `<name>-<i>-0..2`, printing `ack <i>` after each; on `end` release, print `released`, exit
//   follow <url> <schema> <session> <from>
//       follow the session from position <from>, printing `rec <index> <id>` for each record; on
//       `stop` on stdin abort the follow; print `ended <records seen>` once it ended, and exit
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

// Lines are queued as they come: readline drops a line nobody listens for, and the test may send
// the next one while this process is still finishing the work the last one asked for (a follower
// can print a record before the writer has heard back that its append committed).
const queued: string[] = []
const waiting: ((line: string) => void)[] = []
createInterface({ input: process.stdin }).on('line', (line) => {
  const resolve = waiting.shift()
  if (resolve) resolve(line)
  else queued.push(line)
})
/** The next line on stdin. */
const nextLine = () =>
  new Promise<string>((resolve) => {
    const line = queued.shift()
    if (line !== undefined) resolve(line)
    else waiting.push(resolve)
  })
say('ready')
await nextLine()

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
  case 'batches':
    await batches(rest[0]!, rest[1]!)
    break
  case 'follow':
    await follow(Number(rest[0]))
    break
  default:
    throw new Error(`unknown mode ${mode}`)
}

/** Appends batches under one lease as the test asks for them. */
async function batches(leaseMs: string, name: string): Promise<void> {
  const store = createPostgresSessionStore({
    connectionString: url!,
    schema: schema!,
    leaseMs: Number(leaseMs),
  })
  const lease = await store.acquire(sessionId!)
  say('leased')
  let i = 0
  for (let line = await nextLine(); line !== 'end'; line = await nextLine()) {
    for (const stop = i + Number(line); i < stop; i++) {
      await lease.append(batch(name, i))
      say(`ack ${i}`)
    }
  }
  await lease.release()
  await store.close()
  say('released')
  process.exit(0)
}

/** Follows the session until told to stop. */
async function follow(from: number): Promise<void> {
  const store = createPostgresSessionStore({ connectionString: url!, schema: schema! })
  const abort = new AbortController()
  void nextLine().then(() => abort.abort())
  let seen = 0
  for await (const { index, record } of store.follow(sessionId!, { from, signal: abort.signal })) {
    say(`rec ${index} ${(record as UserMessage).id}`)
    seen++
  }
  say(`ended ${seen}`)
  await store.close()
  process.exit(0)
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
