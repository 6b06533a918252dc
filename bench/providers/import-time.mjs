// One cold import, in a fresh process: node import-time.mjs <specifier>...
// Prints the wall time of importing the specifiers in order.
import { reportAndExit } from './protocol.mjs'

const specifiers = process.argv.slice(2)
try {
  const start = performance.now()
  for (const specifier of specifiers) await import(specifier)
  reportAndExit({ importMs: performance.now() - start })
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND') reportAndExit({ unavailable: error.message })
  else reportAndExit({ error: String(error?.stack ?? error) })
}
