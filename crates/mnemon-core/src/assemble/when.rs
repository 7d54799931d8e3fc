//! Relative dates in questions: "yesterday", "last week", "three days
//! ago", "last Tuesday". They name a span of time the words of a record
//! cannot match; the record's date can. The span is reckoned from the
//! present of the history (its newest record), not the wall clock, so an
//! imported history answers "last week" about its own last week.

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
    None
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
