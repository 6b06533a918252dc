// @kode/providers read with `readBatches`: the same items as `for await` over the stream, handed
// out in batches of the items that are ready together (see clients/kode.mjs).
import { prepareKode } from './kode.mjs'

/** Prepares one @kode/providers request read in batches: resolves to the function that runs it. */
export function prepare(setup) {
  return prepareKode(setup, true)
}
