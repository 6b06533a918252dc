import type { HistoryEvent } from '@kode/protocol'
import { replaySession } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { useHarness } from './helpers/harness.js'
import { expectOrdered } from './helpers/history-checks.js'
import { replayedPart } from './helpers/replayed.js'
import { aborts } from './replay-parity/aborts.js'
import { basics } from './replay-parity/basics.js'
import { compaction } from './replay-parity/compaction.js'
import { childrenInBlocks, comparableReplay, expectedReplay } from './replay-parity/expected.js'
import { hostControls } from './replay-parity/host-controls.js'
import { providerErrors } from './replay-parity/provider-errors.js'
import type { Scenario } from './replay-parity/scenario.js'
import { subAgents } from './replay-parity/sub-agents.js'

// A parity sweep: for each scenario a real agent runs against a scripted model, and the replay of
// the session it stored must be the events it emitted live, once the differences docs/sessions.md
// ("Replay") documents are taken out: exactly those, nothing looser. The scenarios live in
// ./replay-parity/, one module per theme.

const SCENARIOS: readonly Scenario[] = [
  ...basics,
  ...providerErrors,
  ...aborts,
  ...hostControls,
  ...compaction,
  ...subAgents,
]

describe('replay parity: the replay of a stored session is its live events', () => {
  const harness = useHarness('file')

  test.each(SCENARIOS)(
    '%s',
    async (_, scenario) => {
      const h = harness()
      const { sessionId, live: emitted, concurrent } = await scenario(h)
      expectOrdered(emitted)
      const live = concurrent ? childrenInBlocks(emitted, sessionId) : emitted
      // Regrouping is what sets these scenarios apart: their children did interleave live.
      expect(replayedPart(live)).toHaveLength(replayedPart(emitted).length)
      if (concurrent) expect(replayedPart(live)).not.toEqual(replayedPart(emitted))
      const store = h.reopenStore()
      const replay = await replaySession(store, sessionId)
      expectOrdered(replay)
      // The session's history and its sub-agents' (their events are in both streams too).
      const histories = new Map<string, readonly HistoryEvent[]>([[sessionId, await store.read(sessionId)]])
      for (const id of new Set(live.map((e) => e.sessionId))) histories.set(id, await store.read(id))
      expect(comparableReplay(replay, histories)).toEqual(expectedReplay(live, histories))
    },
    30_000,
  )
})
