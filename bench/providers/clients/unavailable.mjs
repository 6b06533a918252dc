/** Thrown by a client's `prepare` when its library cannot be loaded: the cell reads "n/a". */
export class Unavailable extends Error {
  name = 'Unavailable'
}
