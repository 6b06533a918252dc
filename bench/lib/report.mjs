/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Prints rows as a Markdown table under a title, so results paste straight into docs/benchmarks.md. */
export function printTable(title, rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)))
  const line = (r) => `| ${r.map((cell, c) => String(cell).padEnd(widths[c])).join(' | ')} |`
  console.log(`\n${title}\n`)
  console.log(line(rows[0]))
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
  for (const r of rows.slice(1)) console.log(line(r))
}
