import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const responses = (name: string) => {
  server().enqueue(streamOf('openai-responses', fixture('openai-responses', name)))
  return testClient(server(), { api: 'openai-responses', model: 'gpt-5' })
}

describe('response.completed after the output streamed', () => {
  test('the final response id is the one response.completed carries (GitHub Copilot rotates ids)', async () => {
    const message = await responses('github-copilot-id-rotation.1').complete(ask())
    const lines = fixture('openai-responses', 'github-copilot-id-rotation.1')
    expect(message.responseId).toBe(JSON.parse(lines.at(-1)!).response.id)
    expect(message.responseId).toBe('capture-id-69')
  })

  test('items a proxy renumbered or re-identified are not mapped a second time', async () => {
    const items = await collect(responses('kode-completed-renumbered').stream(ask()))
    expect(
      items.filter((i) => i.type === 'text_delta').map((i) => i.type === 'text_delta' && i.text),
    ).toEqual(['Hello', ' world'])
    const done = items.at(-1)
    expect(done?.type === 'done' && done.message).toMatchObject({
      parts: [
        { type: 'text', text: 'Hello world', itemId: 'msg_kode_ren' },
        {
          type: 'tool_call',
          id: 'call_kode_ren',
          name: 'lookup',
          argumentsJson: '{"q":1}',
          itemId: 'fc_kode_ren',
        },
      ],
      responseId: 'resp_kode_final',
      stopReason: 'tool_use',
    })
    expect(done?.type === 'done' && done.message.parts).toHaveLength(2)
  })

  test('text streamed in pieces counts as mapped, for every unused index that repeats any run of it', async () => {
    const message = await responses('kode-completed-two-renumbered').complete(ask())
    // `msg_kode_b` repeats text that streamed across two deltas: not mapped again; `msg_kode_c` is new.
    expect(message.parts).toEqual([
      { type: 'text', text: 'Hello world', itemId: 'msg_kode_a' },
      { type: 'text', text: 'Goodbye', itemId: 'msg_kode_c' },
    ])
  })
})
