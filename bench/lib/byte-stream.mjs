/**
 * `bytes` as a web byte stream handing out `sliceSize` bytes per read, the way the benchmark
 * servers write them: what the in-process scripts give a client in place of a network response.
 */
export function byteStream(bytes, sliceSize) {
  let at = 0
  return new ReadableStream({
    type: 'bytes',
    pull(controller) {
      if (at >= bytes.length) controller.close()
      else {
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + sliceSize)))
        at += sliceSize
      }
    },
  })
}
