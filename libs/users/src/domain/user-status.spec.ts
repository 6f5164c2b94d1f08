import { Invalid } from '@app/platform';
import { initial, setStatus } from './user-status';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();

function invalid(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(Invalid);
    return (e as Invalid).fields;
  }
  throw new Error('no error');
}

describe('setStatus', () => {
  it('sets the emoji, message, availability and when it clears', () => {
    expect(
      setStatus(
        initial(),
        3,
        { emoji: 'coffee', message: 'Brb', availability: 'busy', clearStatusAfter: '3_hours' },
        NOW,
      ),
    ).toEqual([
      {
        type: 'UserStatusSet',
        data: {
          userId: 3,
          emoji: 'coffee',
          message: 'Brb',
          availability: 'busy',
          clearStatusAt: '2024-05-06T10:08:09.000Z',
          at: AT,
        },
      },
    ]);
  });

  it('takes speech_balloon for a message without emoji, not_set for no availability, no expiry by default', () => {
    expect(setStatus(initial(), 3, { message: 'hi' }, NOW)).toEqual([
      {
        type: 'UserStatusSet',
        data: {
          userId: 3,
          emoji: 'speech_balloon',
          message: 'hi',
          availability: 'not_set',
          clearStatusAt: null,
          at: AT,
        },
      },
    ]);
  });

  it('clears the status when emoji, message and availability are all blank', () => {
    expect(setStatus(initial(), 3, { emoji: '', message: ' ', clearStatusAfter: '1_day' }, NOW)).toEqual([
      { type: 'UserStatusCleared', data: { userId: 3, at: AT } },
    ]);
  });

  it("refuses with the model's messages", () => {
    expect(
      invalid(() =>
        setStatus(initial(), 3, { emoji: 'Not An Emoji', message: 'x'.repeat(101), availability: 'away' }, NOW),
      ),
    ).toEqual({
      emoji: ['is not a valid emoji name'],
      message: ['is too long (maximum is 100 characters)'],
      availability: ['is not included in the list'],
    });
    expect(setStatus(initial(), 3, { message: 'x'.repeat(100) }, NOW)).toHaveLength(1);
  });
});
