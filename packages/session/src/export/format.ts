import { addUsage, type Usage } from '@kode/protocol'

/** `12345` -> `12,345`, without depending on the host's locale data. */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/**
 * USD with enough digits for sub-cent responses; `cost unknown` when there is no cost (a model
 * whose prices the catalog does not know), which is not the same as `$0.0000`.
 */
export function formatCost(usd: number | undefined): string {
  if (usd === undefined) return 'cost unknown'
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`
}

/**
 * `2025-11-13 08:15:02 UTC`: fixed format and zone, so an export is the same wherever it runs.
 * The schemas allow any finite number, but a `Date` holds only ±8.64e15 ms: a time outside that
 * is shown as its number rather than failing the whole export.
 */
export function formatTime(ms: number): string {
  const date = new Date(ms)
  if (Number.isNaN(date.getTime())) return `${ms} ms (not a valid date)`
  // Years past 9999 are written `+010000-01-01T...`: split at the `T`, not at fixed offsets.
  const [day, time] = date.toISOString().split('T') as [string, string]
  return `${day} ${time.slice(0, 8)} UTC`
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** `12,000 in (11,000 cached) · 420 out`: only the counts the provider reported. */
export function formatUsage(usage: Usage): string {
  const parts: string[] = []
  if (usage.inputTokens !== undefined) {
    const cached = usage.cacheReadTokens ? ` (${formatCount(usage.cacheReadTokens)} cached)` : ''
    parts.push(`${formatCount(usage.inputTokens)} in${cached}`)
  }
  if (usage.outputTokens !== undefined) {
    const reasoning = usage.reasoningTokens ? ` (${formatCount(usage.reasoningTokens)} reasoning)` : ''
    parts.push(`${formatCount(usage.outputTokens)} out${reasoning}`)
  }
  return parts.join(' · ')
}

/**
 * Usage and cost summed over responses; `responses` counts those that reported either, `priced`
 * those that had a cost.
 */
export class Totals {
  usage: Usage = {}
  costUsd = 0
  responses = 0
  priced = 0

  add(usage: Usage | undefined, costUsd: number | undefined): void {
    if (usage === undefined && costUsd === undefined) return
    if (usage) this.usage = addUsage(this.usage, usage)
    if (costUsd !== undefined) {
      this.costUsd += costUsd
      this.priced++
    }
    this.responses++
  }

  merge(other: Totals): void {
    this.usage = addUsage(this.usage, other.usage)
    this.costUsd += other.costUsd
    this.responses += other.responses
    this.priced += other.priced
  }

  /**
   * `3 responses · 36,000 in · 1,200 out · $0.1234`; the cost reads `cost unknown` when no
   * response had one, and `$0.1234 + unknown (1 of 3 responses unpriced)` when some did not.
   */
  describe(): string {
    const usage = formatUsage(this.usage)
    const parts = [`${this.responses} ${this.responses === 1 ? 'response' : 'responses'}`]
    if (usage) parts.push(usage)
    if (this.priced === 0) parts.push(formatCost(undefined))
    else if (this.priced === this.responses) parts.push(formatCost(this.costUsd))
    else
      parts.push(
        `${formatCost(this.costUsd)} + unknown (${this.responses - this.priced} of ${this.responses} responses unpriced)`,
      )
    return parts.join(' · ')
  }
}
