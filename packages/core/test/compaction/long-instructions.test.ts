import { defineTool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { collect, useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import {
  compactionsOf,
  isSummaryRequest,
  readChunk,
  readChunkSession,
  TINY,
  toolLoopModel,
} from '../helpers/small-window.js'

/** A tool whose definition alone is about 1,900 tokens: more than half of `tiny`'s 3,500 input tokens. */
const lookUp = defineTool({
  name: 'look_up',
  description: `Looks a term up in the project glossary. ${'The glossary covers every module. '.repeat(220)}`,
  parameters: Type.Object({ term: Type.String() }),
  execute: ({ term }) => term,
})

describe('instructions that alone pass the threshold', () => {
  const h = useHarness()

  test('leave the history room, so turns do not each compact', async () => {
    const model = toolLoopModel(12)
    h().server.handle(model)
    const agent = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk, lookUp],
      system: 'You read logs.',
      maxTurns: 20,
      compaction: { threshold: 0.5, keepRecent: 20 },
    })
    const { outcome } = await collect(agent.run('Read the whole log'))
    expect(outcome.reason).toBe('completed')
    const records = compactionsOf(await agent.history())
    // The instructions leave about 1,500 tokens of the limit, and the history gets a quarter of
    // that before a compaction: at about 110 tokens a chunk, each compaction makes room for two
    // or more turns (before, each of the 12 turns compacted the one before).
    expect(records.length).toBeGreaterThan(0)
    expect(records.length).toBeLessThanOrEqual(6)
    expect(h().server.requests.filter(isSummaryRequest)).toHaveLength(records.length)
    // Each compaction left the request under the moved threshold, and it never passed the limit.
    for (const record of records) {
      expect(record.tokensAfter).toBeLessThan(record.tokensBefore - 200)
      expect(record.tokensBefore).toBeLessThan(3_500)
    }
  })

  test('that take the whole limit fail the call with the sizes, and nothing is summarised', async () => {
    // About 7,500 tokens of tool definition: twice what `tiny` accepts as input.
    const huge = defineTool({
      name: 'huge',
      description: 'x '.repeat(15_000),
      parameters: Type.Object({}),
      execute: () => 'ok',
    })
    await h().store.create({ id: 'long' })
    await h().store.append(
      'long',
      readChunkSession(2, (n) => `chunk ${n}`, { id: 'a3', text: 'Read.' }),
    )
    const summaries: string[] = []
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [huge],
      compaction: {
        summarize: async ({ transcript }) => {
          summaries.push(transcript)
          return 'Summary.'
        },
      },
    })
    h().server.enqueue(OVERFLOW)
    const { outcome } = await collect(agent.run('Go on'))
    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toMatch(
      /^The request does not fit the model's context window: .*The system prompt and tool definitions alone take about \d+ tokens, which no compaction shrinks\./,
    )
    expect(summaries).toEqual([])
    expect(h().server.requests).toHaveLength(1)
    expect(compactionsOf(await agent.history())).toEqual([])
  })
})
