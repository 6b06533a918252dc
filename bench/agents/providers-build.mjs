// Loaded with `node --import ./providers-build.mjs` and KODE_PROVIDERS_BUILD=<a directory holding a
// build's index.js>: `@kode/providers` resolves to that build instead of packages/providers/dist,
// so two builds can run the same client in the same way. Without the variable it does nothing.
import { register } from 'node:module'
import { pathToFileURL } from 'node:url'

const dir = process.env.KODE_PROVIDERS_BUILD
if (dir) {
  const hook = `data:text/javascript,${encodeURIComponent(`
    let target
    export function initialize(data) { target = data }
    export async function resolve(specifier, context, next) {
      if (specifier === '@kode/providers') return { url: target, shortCircuit: true }
      return next(specifier, context)
    }`)}`
  register(hook, import.meta.url, { data: pathToFileURL(`${dir}/index.js`).href })
}
