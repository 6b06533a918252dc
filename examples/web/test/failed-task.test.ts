import { createClient } from '@kode/providers'
import { createSseTestServer } from '@kode/providers/testing'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { expect, test, vi } from 'vitest'
import { reply } from '../../../test/model/replies.js'
import { startCuttingProxy } from '../../../test/postgres/cutting-proxy.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'
import { type Frame, readStream, startApp, typeOf } from './helpers.js'

// A task whose store fails under it (the database's connection is cut as the task appends its
// answer) showed its pages an answer the store never kept. The next task's log starts from the
// store's replay: pages that saw the failed task start over with it, and show what a page opened
// afterwards shows.

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

const SESSION = '0b7c4c3e-4444-4aaa-8bbb-000000000004'

/** The events a page shows from these frames: a reset drops what it showed before. */
function shown(frames: Frame[]): string[] {
  const events: string[] = []
  for (const frame of frames) {
    if (frame.event === 'reset') events.length = 0
    else if (frame.id !== undefined) events.push(frame.data)
  }
  return events
}

test('pages that saw a task fail in its store show what the store kept once the next task starts', async () => {
  const schema = freshSchema()
  const proxy = await startCuttingProxy(postgresUrl())
  const model = await createSseTestServer()
  const store = createPostgresSessionStore({ connectionString: proxy.url, schema })
  const client = createClient({ api: 'openai-chat', model: 'gpt-4o', apiKey: 'sk-test', baseUrl: model.url })
  const app = await startApp({ store, client })
  // The failure is the server operator's to see: it is logged, not shown as the test's noise.
  const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
  try {
    const url = `${app.url}/sessions/${SESSION}/events`
    const finishes = (frames: Frame[]) =>
      frames.filter((f) => f.id !== undefined && typeOf(f) === 'task_finish')
    const live = readStream(url, (frames) => finishes(frames).length === 3)
    const send = async (text: string) => {
      const response = await fetch(`${app.url}/sessions/${SESSION}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      })
      expect(response.status).toBe(202)
      await app.app.hub.idle(SESSION)
    }
    model.enqueue(reply('f1', 'The first answer.'))
    await send('One')
    // The connection drops as the second answer is appended: the store keeps nothing of it.
    model.enqueue(reply('f2', 'The-second-answer'))
    proxy.arm('The-second-answer', 'before')
    await send('Two')
    expect(proxy.cuts()).toBe(1)
    expect(logged).toHaveBeenCalledWith(`session ${SESSION}: the task failed:`, expect.anything())
    model.enqueue(reply('f3', 'The third answer.'))
    await send('Three')

    const frames = await live
    expect(frames.map((f) => f.data).join('\n')).toContain('The-second-answer')
    const opened = shown(await readStream(url, (frames) => finishes(frames).length === 1))
    expect(opened.join('\n')).not.toContain('The-second-answer')
    expect(shown(frames)).toEqual(opened)
  } finally {
    logged.mockRestore()
    await app.close()
    await store.close()
    await model.close()
    await proxy.close()
    await dropSchema(schema)
  }
})
