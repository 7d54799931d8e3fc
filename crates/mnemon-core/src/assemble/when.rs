//! Dates in questions: relative ones ("yesterday", "last week", "three
//! days ago", "last Tuesday") and absolute ones ("in June", "July 2023",
//! "on 5 January 2024", "the 10th of February"). They name a span of time
//! the words of a record cannot match; the record's date can. The span is
//! reckoned from the present of the history (its newest record), not the
//! wall clock, so an imported history answers "last week" about its own
//! last week, and "in June" about its own latest June.

use chrono::{Datelike, NaiveDate};

use crate::memory::Timestamp;

const DAY: i64 = 86_400_000;

/// Whether `query` names a span at all: which words name one does not
/// depend on the present.
pub fn names_span(query: &str) -> bool {
    span(query, Timestamp(0)).is_some()
}

/// The span `query` refers to, from `now`, if it names one. Spans are
/// generous (a "last week" asked on a Monday may mean the week before the
/// weekend or the last seven days): they raise what falls inside, they do
/// not hide what falls outside.
pub fn span(query: &str, now: Timestamp) -> Option<(Timestamp, Timestamp)> {
    let lower = query.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let today = now.0 - now.0.rem_euclid(DAY);
    let days =
        |from: i64, to: i64| Some((Timestamp(today + from * DAY), Timestamp(today + to * DAY)));
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or_default();
        match *w {
            "today" | "tonight" => return days(0, 1),
            "yesterday" => return days(-1, 0),
            "last" | "past" | "previous" => {
                if let Some(back) = weekday(next).map(|d| days_back_to(today, d)) {
                    return days(-back - 1, -back + 1);
                }
                match next {
                    "week" => return days(-14, 1),
                    "weekend" => return days(-9, 1),
                    "month" => return days(-62, 1),
                    "night" | "evening" => return days(-1, 1),
                    "few" => return days(-8, 1),
                    _ => {}
                }
            }
            "this" => match next {
                "week" => return days(-7, 1),
                "month" => return days(-31, 1),
                "morning" | "afternoon" | "evening" => return days(0, 1),
                _ => {}
            },
            "ago" if i >= 2 => {
                let unit = match words[i - 1].trim_end_matches('s') {
                    "day" => 1,
                    "week" => 7,
                    "month" => 30,
                    _ => continue,
                };
                let n = count(words[i - 2])?;
                let back = n * unit;
                let slack = (unit / 2).max(1);
                return days(-back - slack, -back + slack + 1);
            }
            _ => {}
        }
    }
    named_date(&words, now)
}

/// The months, as questions spell them.
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The months as dates abbreviate them ("29 Dec 2023", "Jan 5"): read only
/// beside a day or a year, since "jan" and "mar" are also words.
const SHORT_MONTHS: [&str; 13] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "sept",
];

/// Words that put a date in a question as the time of something ("in
/// June", "mid-March", "the 5th of May"): without one of these, a day or
/// a year beside it, a month's name is more likely a word ("may", "march").
const DATE_INTRODUCERS: &[&str] = &[
    "in", "during", "on", "of", "the", "early", "late", "mid", "around",
];

/// Words before a date that make it a bound, not the time asked about
/// ("before December 23rd", "since May"): what answers may lie anywhere
/// on one side of it. Two-word bounds ("as of", "prior to", "up to") are
/// read by `bounded`.
const BOUNDS: &[&str] = &["before", "after", "since", "until", "till", "by"];

/// Whether the words just before a date make it a bound, not a span.
fn bounded(lead2: &str, lead1: &str) -> bool {
    BOUNDS.contains(&lead1)
        || matches!(
            (lead2, lead1),
            ("as", "of") | ("prior", "to") | ("up", "to")
        )
}

/// The span an absolute date in `words` names: a month ("in June", "July
/// 2023") from its first day to its last, a day ("on 5 January 2024",
/// "January 6", "the 10th of February") from the day before to the day
/// after, since a conversation late in the evening is dated the next day
/// in some exports. A date without a year is the latest one up to `now`.
/// A date that bounds the question ("before", "as of") names no span.
///
/// On the development conversations 94 % (LoCoMo) and 92 % (REALTALK) of
/// the evidence of questions naming a month was said in that month, and
/// 94 % and 83 % of those naming a day within a day of it
/// (BENCHMARKS.md, 2026-12-01).
fn named_date(words: &[&str], now: Timestamp) -> Option<(Timestamp, Timestamp)> {
    let word = |j: Option<usize>| j.and_then(|j| words.get(j)).copied().unwrap_or_default();
    for (i, w) in words.iter().enumerate() {
        let (m, short) = match MONTHS.iter().position(|x| x == w) {
            Some(m) => (m, false),
            None => match SHORT_MONTHS.iter().position(|x| x == w) {
                // "sept", after the twelve, is September's.
                Some(12) => (8, true),
                Some(m) => (m, true),
                None => continue,
            },
        };
        let month = m as u32 + 1;
        let (after1, after2) = (word(Some(i + 1)), word(Some(i + 2)));
        let (before1, before2) = (word(i.checked_sub(1)), word(i.checked_sub(2)));
        let mut day = day_of(after1);
        let year = if day.is_some() {
            year_of(after2)
        } else {
            year_of(after1)
        };
        // The words just before the date: "the 10th of February" reads
        // back past its day and "of".
        let mut lead = i;
        if day.is_none() {
            if let Some(d) = day_of(before1) {
                day = Some(d);
                lead = i - 1;
            } else if before1 == "of" && day_of(before2).is_some() {
                day = day_of(before2);
                lead = i - 2;
            }
        }
        if lead > 0 && word(Some(lead - 1)) == "the" {
            lead -= 1;
        }
        let (lead1, lead2) = (word(lead.checked_sub(1)), word(lead.checked_sub(2)));
        let introduced = !short && DATE_INTRODUCERS.contains(&before1);
        if !(introduced || day.is_some() || year.is_some()) {
            continue;
        }
        if bounded(lead2, lead1) {
            return None;
        }
        let present = now.datetime().date_naive();
        let year = year.unwrap_or_else(|| {
            let asked = (month, day.unwrap_or(1));
            if asked <= (present.month(), present.day()) {
                present.year()
            } else {
                present.year() - 1
            }
        });
        let at = |d: NaiveDate| {
            let days = d.signed_duration_since(NaiveDate::default()).num_days();
            Timestamp(days * DAY)
        };
        return match day {
            Some(d) => {
                let date = NaiveDate::from_ymd_opt(year, month, d)?;
                Some((Timestamp(at(date).0 - DAY), Timestamp(at(date).0 + 2 * DAY)))
            }
            None => {
                let first = NaiveDate::from_ymd_opt(year, month, 1)?;
                let next = if month == 12 {
                    NaiveDate::from_ymd_opt(year + 1, 1, 1)?
                } else {
                    NaiveDate::from_ymd_opt(year, month + 1, 1)?
                };
                Some((at(first), at(next)))
            }
        };
    }
    None
}

/// A day of the month as questions write it: "5", "5th", "23rd".
fn day_of(w: &str) -> Option<u32> {
    let digits = w
        .strip_suffix("st")
        .or_else(|| w.strip_suffix("nd"))
        .or_else(|| w.strip_suffix("rd"))
        .or_else(|| w.strip_suffix("th"))
        .unwrap_or(w);
    (digits.len() <= 2)
        .then(|| digits.parse::<u32>().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

/// A year of four digits, 1900 to 2199.
fn year_of(w: &str) -> Option<i32> {
    (w.len() == 4)
        .then(|| w.parse::<i32>().ok())
        .flatten()
        .filter(|y| (1900..2200).contains(y))
}

fn count(w: &str) -> Option<i64> {
    const WORDS: &[&str] = &[
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    match w {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" | "several" => Some(3),
        _ => w
            .parse::<i64>()
            .ok()
            .filter(|n| (0..=3_650).contains(n))
            .or_else(|| WORDS.iter().position(|x| *x == w).map(|n| n as i64)),
    }
}

/// The days of the week, Monday first, as questions spell them.
pub const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// 0 for Monday.
fn weekday(w: &str) -> Option<i64> {
    WEEKDAYS.iter().position(|d| *d == w).map(|d| d as i64)
}

/// Days from `today` (midnight) back to the last `day` before it (1 to 7).
fn days_back_to(today: i64, day: i64) -> i64 {
    // 1970-01-01 was a Thursday (3, counting Monday as 0).
    let now = (today.div_euclid(DAY) + 3).rem_euclid(7);
    let back = (now - day).rem_euclid(7);
    if back == 0 { 7 } else { back }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 2024-03-13, 15:00 UTC.
    const NOW: Timestamp = Timestamp(1_710_342_000_000);

    fn day(s: &str) -> i64 {
        Timestamp::parse(&format!("{s}T00:00:00Z")).unwrap().0
    }

    fn covers(q: &str, inside: &[&str], outside: &[&str]) {
        let (from, to) = span(q, NOW).unwrap_or_else(|| panic!("no span in {q:?}"));
        for d in inside {
            let t = day(d) + 12 * 3_600_000;
            assert!(from.0 <= t && t < to.0, "{q}: {d} should be inside");
        }
        for d in outside {
            let t = day(d) + 12 * 3_600_000;
            assert!(!(from.0 <= t && t < to.0), "{q}: {d} should be outside");
        }
    }

    #[test]
    fn relative_days_weeks_and_weekdays_name_their_span() {
        covers(
            "what did we fix yesterday?",
            &["2024-03-12"],
            &["2024-03-13", "2024-03-11"],
        );
        covers("anything new today", &["2024-03-13"], &["2024-03-12"]);
        covers(
            "what did I cook last week",
            &["2024-03-05", "2024-03-11"],
            &["2024-02-20"],
        );
        covers(
            "the bug from three days ago",
            &["2024-03-10"],
            &["2024-03-05", "2024-03-13"],
        );
        covers("a week ago", &["2024-03-06"], &["2024-02-20"]);
        covers("2 weeks ago", &["2024-02-28"], &["2024-03-12"]);
        covers(
            "where did we eat last Saturday?",
            &["2024-03-09"],
            &["2024-03-02", "2024-03-12"],
        );
        covers("last Wednesday", &["2024-03-06"], &["2024-03-13"]);
        covers("last month", &["2024-02-01"], &["2023-12-01"]);
    }

    #[test]
    fn a_named_month_or_day_is_its_span_in_the_latest_year_up_to_now() {
        covers(
            "When did Melanie go camping in June?",
            &["2023-06-01", "2023-06-30"],
            &["2023-05-31", "2023-07-01", "2024-06-15"],
        );
        covers(
            "What did Mel and her kids paint in July 2023?",
            &["2023-07-15"],
            &["2023-06-30", "2023-08-01"],
        );
        covers(
            "How did my rating improve from mid-March?",
            &["2024-03-05"],
            &["2023-03-05", "2024-04-01"],
        );
        covers(
            "What happened to Elise in the library on 5 January 2024?",
            &["2024-01-04", "2024-01-05", "2024-01-06"],
            &["2024-01-03", "2024-01-07"],
        );
        covers(
            "Where is Paola going on the 10th of February 2024?",
            &["2024-02-10"],
            &["2024-02-08", "2024-02-12"],
        );
        covers(
            "How many naps did Nicolas take on January 6 2024?",
            &["2024-01-06"],
            &["2024-01-08"],
        );
        // Later in the year than the present: last year's.
        covers(
            "What did we plan on March 20?",
            &["2023-03-20"],
            &["2024-03-20"],
        );
        covers("the party in December", &["2023-12-24"], &["2024-12-24"]);
        covers(
            "What kind of pasta did Kate make on 29 Dec 2023?",
            &["2023-12-29"],
            &["2023-12-31"],
        );
        covers("Where was she on Sept 3?", &["2023-09-03"], &["2023-09-06"]);
    }

    #[test]
    fn a_date_that_bounds_the_question_or_a_month_that_is_a_word_names_no_span() {
        for q in [
            "Did Vanessa take the test before December 23rd, 2023?",
            "How many pets did Andrew have, as of September 2023?",
            "What has changed since May?",
            "What did I finish by the 3rd of June?",
            "Where did she live prior to June 2023?",
            "What did he read up to 4 March 2024?",
            "What may Caroline do next?",
            "Will they march with the others?",
            "Is 2023 the year she moved?",
            "What did Jan say in the meeting?",
            "Did they mar the finish?",
        ] {
            assert_eq!(span(q, NOW), None, "{q}");
        }
    }

    proptest::proptest! {
        /// Any words around any month, day and year: a span, when there
        /// is one, starts before it ends.
        #[test]
        fn any_date_phrase_names_an_ordered_span_or_none(
            lead in proptest::sample::select(vec!["in", "on", "the", "of", "as of", "before", "what", ""]),
            day in 0u32..40,
            suffix in proptest::sample::select(vec!["", "st", "th"]),
            month in 0usize..12,
            year in proptest::sample::select(vec![None, Some(1899), Some(2023), Some(2199), Some(2200)]),
            day_first in proptest::bool::ANY,
            now in 0i64..4_102_444_800_000,
        ) {
            let day = format!("{day}{suffix}");
            let m = MONTHS[month];
            let date = if day_first { format!("{day} of {m}") } else { format!("{m} {day}") };
            let q = format!("what happened {lead} {date} {}", year.map(|y| y.to_string()).unwrap_or_default());
            if let Some((from, to)) = span(&q, Timestamp(now)) {
                proptest::prop_assert!(from.0 < to.0, "{q}");
            }
        }
    }

    #[test]
    fn questions_without_a_relative_date_have_no_span() {
        for q in [
            "what is the last step",
            "when did the deploy fail",
            "how many days between the launch and the review",
            "the previous version",
        ] {
            assert_eq!(span(q, NOW), None, "{q}");
            assert!(!names_span(q), "{q}");
        }
        for q in [
            "what did we ship last week",
            "the call two days ago",
            "yesterday's bug",
        ] {
            assert!(names_span(q), "{q}");
        }
    }
}
