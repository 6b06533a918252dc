// Times each library's cold import, one fresh process per run.
import { IMPORTS } from './clients/index.mjs'
import { measure } from './measure.mjs'

/**
 * Times the imports of the clients in `options.clients`, `options.importRuns` times each.
 * Resolves to one entry per library: its label, client, the runs in ms, and a `failure` when
 * it could not be imported (`n/a` when not installed or built).
 */
export async function measureImports(options, log) {
  const results = []
  for (const entry of IMPORTS.filter((i) => options.clients.includes(i.client))) {
    log(`import ${entry.label}`)
    const runs = []
    let failure
    for (let run = 0; run < options.importRuns && !failure; run++) {
      const report = await measure('./import-time.mjs', entry.specifiers)
      if (report.importMs !== undefined) runs.push(report.importMs)
      else failure = report.unavailable ? 'n/a' : `error: ${report.error}`
    }
    results.push({ ...entry, runs, failure })
  }
  return results
}
