import { AgentError, type CompactionOptions } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { useHarness } from '../helpers/harness.js'
import { readChunkSession } from '../helpers/small-window.js'

/** What `make` threw, as `code: message`, or `accepted`. */
function refused(make: () => unknown): string {
  try {
    make()
  } catch (error) {
    expect(AgentError.is(error)).toBe(true)
    return `${(error as AgentError).code}: ${(error as Error).message}`
  }
  return 'accepted'
}

// Options from JavaScript or from a config file are not checked by the compiler: a wrong one is
// refused by createAgent, naming it, not met halfway through a long session.
describe('compaction options', () => {
  const harness = useHarness()
  const make = (compaction: unknown) => () =>
    harness().createAgent({ compaction: compaction as CompactionOptions })

  test('out of range are refused, naming the option', () => {
    expect(refused(make({ threshold: 0 }))).toBe(
      'invalid_options: compaction.threshold must be in (0, 1] (got 0)',
    )
    expect(refused(make({ threshold: Number.NaN }))).toBe(
      'invalid_options: compaction.threshold must be in (0, 1] (got NaN)',
    )
    expect(refused(make({ keepRecent: -1 }))).toBe(
      'invalid_options: compaction.keepRecent must be a whole number >= 0 (got -1)',
    )
    expect(refused(make({ keepRecent: 1.5 }))).toBe(
      'invalid_options: compaction.keepRecent must be a whole number >= 0 (got 1.5)',
    )
  })

  test('of the wrong type are refused, not coerced or called later', () => {
    expect(refused(make({ threshold: '0.5' }))).toBe(
      'invalid_options: compaction.threshold must be in (0, 1] (got "0.5")',
    )
    expect(refused(make({ summarize: 'cheap-model' }))).toBe(
      'invalid_options: compaction.summarize must be a function (got "cheap-model")',
    )
    expect(refused(make(true))).toBe(
      'invalid_options: compaction must be an object of options or false (got true)',
    )
    expect(refused(make(null))).toBe(
      'invalid_options: compaction must be an object of options or false (got null)',
    )
  })

  test('that are usable are accepted', () => {
    expect(refused(make(false))).toBe('accepted')
    expect(refused(make(undefined))).toBe('accepted')
    expect(refused(make({ threshold: 1, keepRecent: 0, summarize: async () => 'summary' }))).toBe('accepted')
  })
  test('a summarize that answers at once, without a promise, writes the summary', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append(
      'long',
      readChunkSession(3, (n) => `chunk ${n}`, { id: 'done', text: 'Read them.' }),
    )
    const agent = h.createAgent({
      sessionId: 'long',
      compaction: { keepRecent: 1, summarize: () => 'Three chunks were read.' },
    })

    expect(await agent.compact()).toMatchObject({
      compacted: true,
      record: { summary: 'Three chunks were read.' },
    })
  })
})
