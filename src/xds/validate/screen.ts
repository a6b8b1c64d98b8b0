/**
 * Envoy's rules checked in the walk the encoding makes anyway. While a screen is on, every
 * generated wire writer (src/xds/gen/wire-encoders.js) hands it the message it is about to write,
 * and a shallow validator checks that message's own fields, oneofs and cross-field rules, the
 * contents of its `Any`s whole (ValidatorOptions.shallowOf); the writer then reaches its
 * sub-messages, which are screened in turn. A resource whose screen finds nothing breaks no rule;
 * one it doubts (a rule broken, a message the fast writer handed to protobufjs, which is not
 * screened) is for its caller to walk whole, for the violations and their paths. So the screen is
 * never less strict than the walk: it only spares the walk where the walk would find nothing.
 */
import { wireRuntime } from '../wire/runtime.js';
import type { Validator } from './walker.js';

export class EncodeScreen {
  private readonly screening = wireRuntime.screening;
  private readonly onMessage: (typeName: string, message: object) => void;

  /** `shallow`: a validator made with `shallowOf` (screenValidator). */
  constructor(shallow: Validator) {
    const screening = this.screening;
    // Once doubted, a resource is walked whole anyway: the rest of it is not screened.
    this.onMessage = (typeName, message) => {
      if (!screening.dirty && !shallow.screen(typeName, message)) screening.dirty = true;
    };
  }

  /** Turns the screen on for one resource's encoding. */
  begin(): void {
    this.screening.dirty = false;
    this.screening.on = this.onMessage;
  }

  /** Turns it off (call it in a `finally`): whether the resource encoded since `begin` is in doubt. */
  end(): boolean {
    const doubted = this.screening.dirty;
    this.screening.on = null;
    this.screening.dirty = false;
    return doubted;
  }
}
