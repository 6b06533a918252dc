// Writes src/codec/compiled-checks.generated.ts from the history schemas (see render-checks.ts).
// Run after changing a schema: pnpm --filter @kode/protocol compile-checks
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const built = await esbuild.build({
  entryPoints: [fileURLToPath(new URL('./render-checks.ts', import.meta.url))],
  bundle: true,
  format: 'esm',
  platform: 'node',
  write: false,
})
const source = Buffer.from(built.outputFiles[0].text).toString('base64')
const { CHECKS_FILE, renderCompiledChecks } = await import(`data:text/javascript;base64,${source}`)
writeFileSync(`${root}/${CHECKS_FILE}`, renderCompiledChecks())
process.stdout.write(`wrote ${CHECKS_FILE}\n`)
