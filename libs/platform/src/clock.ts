/** The time, as a port so deciders' callers can be tested at a fixed instant. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
