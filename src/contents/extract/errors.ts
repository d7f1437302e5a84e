/** Nothing readable came out of a page, or it took longer than the time limit for one page. */
export class ExtractionFailure extends Error {
  override name = 'ExtractionFailure';
  readonly reason = 'no_content' as const;
}

/** Every worker is busy and the queue is full: the caller should try again later. */
export class ExtractorBusy extends Error {
  override name = 'ExtractorBusy';
  constructor() {
    super('every extraction worker is busy and the queue is full');
  }
}
