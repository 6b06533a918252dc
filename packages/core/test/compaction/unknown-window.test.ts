import { describe, expect, test } from 'vitest'
import { chatStream, say } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import { bodyTokens, compactionsOf, readChunk, readChunkSession } from '../helpers/small-window.js'

/** The window of the model the server plays, which the catalog does not know. */
const WINDOW = 12_000

describe('a model whose window the catalog does not know', () => {
  const h = useHarness()

  test('overflowing, compacts to less than the request it refused, and completes', async () => {
    await h().store.create({ id: 'long' })
    // Six turns of about 4,000 tokens: the last four alone do not fit the window.
    await h().store.append(
      'long',
      readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(16_000)}`, { id: 'done', text: 'Read them.' }),
    )
    h().server.handle((request) =>
      bodyTokens(request) > WINDOW ? OVERFLOW : chatStream({ id: 'r', steps: [say('Done.')] }),
    )
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'house-model' }),
      tools: [readChunk],
      compaction: { summarize: async () => 'Six chunks were read.' },
    })
    expect(agent.client.modelInfo?.contextWindow).toBeUndefined()

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    expect(compactionsOf(await agent.history())).toHaveLength(1)
    expect(bodyTokens(h().server.requests.at(-1)!)).toBeLessThanOrEqual(WINDOW)
  })
  test("a host's summary no smaller than the request it refused is not saved", async () => {
    await h().store.create({ id: 'long' })
    await h().store.append(
      'long',
      readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(16_000)}`, { id: 'done', text: 'Read them.' }),
    )
    h().server.handle((request) =>
      bodyTokens(request) > WINDOW ? OVERFLOW : chatStream({ id: 'r', steps: [say('Done.')] }),
    )
    // About 30,000 tokens: more than the whole refused request (about 24,000).
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'house-model' }),
      tools: [readChunk],
      compaction: { summarize: async () => 'y'.repeat(120_000) },
    })

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toMatch(
      /The compaction that was to make room failed: The summary \(about \d+ tokens\) is no smaller than the request the provider refused \(about \d+ tokens\), so nothing was compacted\./,
    )
    // Saved, it would stand in every later request, each of them refused.
    expect(compactionsOf(await agent.history())).toEqual([])
  })
})
