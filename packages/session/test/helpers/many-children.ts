import { createMemorySessionStore, type SessionStore } from '@kode/session'
import { HistoryBuilder } from '../../../../test/history/history.js'

/**
 * A store holding `main`, one of whose records links `count` sub-agent sessions, that aborts
 * `controller` at the first read of one of them and counts those reads.
 */
export async function manyChildren(count: number) {
  const memory = createMemorySessionStore()
  const h = new HistoryBuilder()
  const ids = Array.from({ length: count }, (_, i) => `kid-${i}`)
  for (const id of ids) {
    await memory.create({ id })
    await memory.append(id, [h.user(`task ${id}`), h.assistant(`done ${id}`)])
  }
  const ask = h.calls(['fan_out'])
  const [first, ...more] = ids
  await memory.create({ id: 'main' })
  await memory.append('main', [
    h.user('go'),
    ask,
    h.result(`${ask.id}-c0`, 'fan_out', 'done', {
      uiExtra: { type: 'session', sessionId: first!, moreSessionIds: more },
    }),
  ])
  const controller = new AbortController()
  const reads: string[] = []
  const store: SessionStore = {
    ...memory,
    async read(sessionId) {
      if (sessionId !== 'main') {
        reads.push(sessionId)
        controller.abort(new Error('stopped'))
      }
      return memory.read(sessionId)
    },
  }
  return { store, reads, controller }
}
