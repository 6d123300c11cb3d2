import { closestName, didYouMean } from '@/core/did-you-mean';

describe('closestName', () => {
  it('finds the name a word misspells', () => {
    expect(closestName('widgit', ['name', 'widget', 'label'])).toBe('widget');
    expect(closestName('strat_date', ['start_date', 'end_date'])).toBe('start_date');
    expect(closestName('Start_Date', ['start_date'])).toBe('start_date');
  });

  it('suggests nothing for a word close to none', () => {
    expect(closestName('colour', ['widget', 'label'])).toBeUndefined();
    expect(closestName('ab', ['xy'])).toBeUndefined();
    expect(didYouMean('zzz', ['start_date'])).toBe('');
    expect(didYouMean('labl', ['label'])).toBe('; did you mean "label"?');
  });
});
