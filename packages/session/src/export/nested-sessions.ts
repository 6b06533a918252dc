import type { HistoryEvent, Usage } from '@kode/protocol'
import type { SubSessionHistories } from '../replay/derive-replay.js'
import { Totals } from './format.js'
import { renderDetails } from './render-parts.js'
import { fillSlots, html, type SafeHtml, slot } from './safe-html.js'

/**
 * A session's usage as its records add it, in order, with the places where the totals of the
 * sub-agent sessions it links are added: worked out once those are known, in the same order of
 * additions as if they had been known all along (a cost is a float, whose sum depends on it).
 */
export class TotalsLog {
  readonly #entries: ({ usage: Usage | undefined; costUsd: number | undefined } | number)[] = []

  add(usage: Usage | undefined, costUsd: number | undefined): void {
    if (usage === undefined && costUsd === undefined) return
    this.#entries.push({ usage, costUsd })
  }

  /** Where the totals of the sub-agent session in slot `key` are added. */
  link(key: number): void {
    this.#entries.push(key)
  }

  /** The totals, with each linked session's (`undefined`: not nested there, nothing added). */
  total(linked: (key: number) => Totals | undefined): Totals {
    const totals = new Totals()
    for (const entry of this.#entries) {
      if (typeof entry !== 'number') totals.add(entry.usage, entry.costUsd)
      else {
        const child = linked(entry)
        if (child !== undefined) totals.merge(child)
      }
    }
    return totals
  }
}

/**
 * A session's transcript rendered on its own: a slot in its markup for each sub-agent session it
 * links, in the order it asked for them (`links`, by slot key).
 */
export interface OwnTranscript {
  markup: SafeHtml
  totals: TotalsLog
  links: readonly string[]
}

/** A session's rendered records and its usage totals (nested sub-agent sessions included). */
export interface RenderedTranscript {
  markup: SafeHtml
  totals: Totals
}

/** Tracks the slots a transcript asks for, while it renders. */
export class SlotLinks {
  readonly links: string[] = []

  /** The slot of sub-agent session `sessionId`, its totals' place recorded in `totals`. */
  slotFor(sessionId: string, totals: TotalsLog): SafeHtml {
    const key = this.links.length
    this.links.push(sessionId)
    totals.link(key)
    return slot(key)
  }
}

/** What `nestSubSessions` needs to find and render the sessions a transcript links. */
export interface NestingContext {
  subSessions: SubSessionHistories
  /** Sessions already rendered, so a link cycle cannot recurse forever. */
  seen: Set<string>
  /** Renders a sub-agent session's history on its own. */
  renderOwn(history: readonly HistoryEvent[]): OwnTranscript
}

interface Frame {
  own: OwnTranscript
  /** The slots filled so far, by key: the nested session's block and totals, or none. */
  filled: { markup: SafeHtml | ''; totals: Totals | undefined }[]
}

/**
 * Fills a transcript's slots with the sub-agent sessions they link, each nested in a collapsible
 * block with its totals, and theirs in turn: a session is nested at its first link (in the order
 * a depth-first rendering asks for them) and not again. A loop over an explicit stack, not
 * recursion, so sessions nest to any depth.
 */
export function nestSubSessions(root: OwnTranscript, context: NestingContext): RenderedTranscript {
  const stack: Frame[] = [{ own: root, filled: [] }]
  for (;;) {
    const top = stack[stack.length - 1]!
    const { links } = top.own
    if (top.filled.length < links.length) {
      const sessionId = links[top.filled.length]!
      const history = context.subSessions.get(sessionId)
      if (history === undefined || context.seen.has(sessionId)) {
        top.filled.push({ markup: '', totals: undefined })
        continue
      }
      context.seen.add(sessionId)
      stack.push({ own: context.renderOwn(history), filled: [] })
      continue
    }
    stack.pop()
    const done: RenderedTranscript = {
      markup: fillSlots(top.own.markup, (key) => top.filled[key]!.markup),
      totals: top.own.totals.total((key) => top.filled[key]!.totals),
    }
    const parent = stack[stack.length - 1]
    if (parent === undefined) return done
    const sessionId = parent.own.links[parent.filled.length]!
    parent.filled.push({
      markup: renderDetails(
        'sub-session',
        html`Sub-agent session <code>${sessionId}</code>`,
        html`<p class="usage">${done.totals.describe()}</p>${done.markup}`,
      ),
      totals: done.totals,
    })
  }
}
