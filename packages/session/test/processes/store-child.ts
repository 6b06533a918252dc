// A separate process using the file store, driven by the process tests. Modes:
//   tear <dir> <session> <bytes>  append records `rec-0` .. `rec-4`, printing `ack <i>` once each
//                                 append has resolved, then print `big` and append `rec-5` of
//                                 about <bytes>: the parent kills it while that write is on disk
//   hold <dir> <session>          append one record, print `ready`, close when stdin says `close`
//   try  <dir> <session>          append one record; print `ok` or the error code and holder pid
//   fill <dir> <session> <bytes>  append batches of three records of about <bytes> each until an
//                                 append fails; print `acked <records>` after each, then
//                                 `failed <code>`, then `closed` or `close_failed <code>`
//   list <dir> -                  list the sessions; print `listed <count> warned <count>`, or
//                                 `failed <code>`
//   replay <dir> <session>        replay the session, its sub-agents loaded with loadSubSessions;
//                                 print `replayed <count of sessions its events name>`, or
//                                 `failed <code>`
import { createInterface } from 'node:readline'
import type { UserMessage } from '@kode/protocol'
import { deriveReplayEvents, loadSubSessions, SessionError, SessionLockedError } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'

const [mode, dir, sessionId, bytes] = process.argv.slice(2)
if (!mode || !dir || !sessionId) throw new Error('usage: store-child <mode> <dir> <session> [bytes]')
let warned = 0
const store = createFileSessionStore({ dir, fsync: true, onWarning: () => warned++ })

function record(id: string, size = 16): UserMessage {
  return { role: 'user', id, createdAt: Date.now(), parts: [{ type: 'text', text: 'x'.repeat(size) }] }
}

switch (mode) {
  case 'tear': {
    for (let i = 0; i < 5; i++) {
      await store.append(sessionId, [record(`rec-${i}`, 1024)])
      process.stdout.write(`ack ${i}\n`)
    }
    process.stdout.write('big\n')
    await store.append(sessionId, [record('rec-5', Number(bytes))])
    process.stdout.write('ack 5\n')
    break
  }
  case 'hold': {
    await store.append(sessionId, [record(`held-${process.pid}`)])
    process.stdout.write('ready\n')
    const input = createInterface({ input: process.stdin })
    for await (const line of input) {
      if (line === 'close') break
    }
    input.close()
    process.stdin.destroy()
    await store.close()
    process.stdout.write('closed\n')
    break
  }
  case 'try': {
    try {
      await store.append(sessionId, [record(`try-${process.pid}`)])
      await store.close()
      process.stdout.write('ok\n')
    } catch (error) {
      const holder = error instanceof SessionLockedError ? ` ${error.holder?.pid}` : ''
      process.stdout.write(`${SessionError.is(error) ? error.code : String(error)}${holder}\n`)
    }
    break
  }
  case 'fill': {
    let acked = 0
    for (let batch = 0; ; batch++) {
      const records = [0, 1, 2].map((i) => record(`fill-${batch}-${i}`, Number(bytes)))
      try {
        await store.append(sessionId, records)
      } catch (error) {
        process.stdout.write(`failed ${(error as NodeJS.ErrnoException).code}\n`)
        break
      }
      acked += records.length
      process.stdout.write(`acked ${acked}\n`)
    }
    try {
      await store.close()
      process.stdout.write('closed\n')
    } catch (error) {
      process.stdout.write(`close_failed ${(error as NodeJS.ErrnoException).code}\n`)
    }
    break
  }
  case 'list': {
    try {
      const sessions = await store.list()
      process.stdout.write(`listed ${sessions.length} warned ${warned}\n`)
    } catch (error) {
      process.stdout.write(`failed ${(error as NodeJS.ErrnoException).code}\n`)
    }
    break
  }
  case 'replay': {
    try {
      const history = await store.read(sessionId)
      const subSessions = await loadSubSessions(store, history)
      const events = deriveReplayEvents(history, { sessionId, subSessions })
      process.stdout.write(`replayed ${new Set(events.map((e) => e.sessionId)).size}\n`)
    } catch (error) {
      process.stdout.write(`failed ${(error as NodeJS.ErrnoException).code}\n`)
    }
    break
  }
  default:
    throw new Error(`unknown mode ${mode}`)
}
