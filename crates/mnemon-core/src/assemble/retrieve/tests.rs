//! Retrieval's unit tests: names, stems, questions about time, neighbours
//! and common words, over a store kept in memory.

mod name_tests {
    use crate::assemble::retrieve::{asks_about_time, names_in, search_words, speakers_in};

    #[test]
    fn speakers_are_the_one_word_labels_of_lines() {
        assert_eq!(
            speakers_in("Maria: hi John\nJohn: Thanks, Maria!\nnote: a b\nTo do: x\n: y"),
            vec!["maria", "john", "note"]
        );
        assert!(speakers_in("no label here").is_empty());
    }

    #[test]
    fn a_full_name_is_a_label_and_a_lower_case_heading_is_not() {
        assert_eq!(
            speakers_in("Fahim Khan: hi\nMary Ann Lee: yes\n Ben\t: ok\nTo do: x\nNext steps: y"),
            vec!["fahim khan", "mary ann lee", "ben"]
        );
        assert!(speakers_in("One Two Three Four: too long for a name").is_empty());
        assert!(speakers_in("Q3 Plan!: not a name").is_empty());
    }

    #[test]
    fn words_are_searched_by_their_stem() {
        let q: Vec<String> = [
            "organized",
            "tasks",
            "api",
            "2024",
            "running",
            "deployments",
            "argon2",
            "v2",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            search_words(&q),
            vec![
                "organ*", "task*", "api", "2024", "running*", "deploy*", "argon2*", "v2"
            ]
        );
    }

    #[test]
    fn questions_about_time_are_told_apart() {
        assert!(asks_about_time("When did Pavel move to Lisbon?"));
        assert!(asks_about_time(
            "How long before the deadline did I finish?"
        ));
        assert!(asks_about_time("How many weeks between the two sprints?"));
        assert!(!asks_about_time("What is the name of Kira's beagle?"));
        assert!(!asks_about_time("Which database did we choose?"));
    }

    #[test]
    fn names_are_capitalized_words_that_do_not_open_a_sentence() {
        assert_eq!(
            names_in(
                "Caroline: Fun fact, Foxglove Media has its headquarters in Oslo. Today Nikolai left."
            ),
            vec!["foxglove", "media", "oslo", "nikolai"]
        );
        assert_eq!(names_in("Step 12: fixed it. Ok"), Vec::<String>::new());
    }
}

mod common_word_tests {
    //! An in-memory log stands in for the SQLite store here, so the test
    //! can see which postings retrieval asks for; the store's own postings
    //! are tested against SQLite in `mnemon-sqlite/tests/retrieval.rs`.

    use std::cell::RefCell;

    use crate::assemble::neighbours::{NEIGHBOUR_DECAY, NEIGHBOUR_WEIGHT, with_neighbours};
    use crate::assemble::retrieve::*;
    use crate::memory::{StoreResult, Timestamp};

    struct Log {
        source: HitSource,
        texts: Vec<String>,
        asked: RefCell<Vec<String>>,
    }

    impl Log {
        fn new(source: HitSource, texts: Vec<String>) -> Log {
            Log {
                source,
                texts,
                asked: RefCell::new(Vec::new()),
            }
        }

        fn matches(&self, row: usize, term: &str) -> bool {
            let text = self.texts[row].to_lowercase();
            let mut words = text.split(|c: char| !c.is_alphanumeric());
            match term.strip_suffix('*') {
                Some(p) => words.any(|w| w.starts_with(p)),
                None => words.any(|w| w == term),
            }
        }
    }

    crate::assemble::semantic::keeps_no_vectors!(Log);

    impl SearchStore for Log {
        fn search(&self, _: &str, _: usize, _: &[HitSource]) -> StoreResult<Vec<Hit>> {
            Ok(Vec::new())
        }

        fn postings(&self, source: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>> {
            if source != self.source {
                return Ok(Vec::new());
            }
            self.asked.borrow_mut().push(term.to_string());
            Ok((0..self.texts.len())
                .rev()
                .filter(|r| self.matches(*r, term))
                .take(cap)
                .map(|r| r as i64 + 1)
                .collect())
        }

        fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
            Ok(rows
                .iter()
                .map(|r| Hit {
                    source,
                    id: match source {
                        HitSource::Message => format!("m{r}"),
                        _ => format!("o{r}"),
                    },
                    text: self.texts[*r as usize - 1].clone(),
                    bm25: 0.0,
                    at: Timestamp(*r),
                    importance: 0.5,
                    row: *r,
                    role: None,
                })
                .collect())
        }

        fn last_row(&self, source: HitSource) -> StoreResult<u64> {
            Ok(if source == self.source {
                self.texts.len() as u64
            } else {
                0
            })
        }
    }

    #[test]
    fn the_best_hits_bring_two_rings_of_neighbours() {
        let log = Log {
            source: HitSource::Message,
            texts: vec![
                "did you paint anything?".into(),
                "what breed is the new dog?".into(),
                "the zebra import failed".into(),
                "it is a beagle, called Rex".into(),
                "he sleeps all day".into(),
                "unrelated step".into(),
            ],
            asked: RefCell::new(Vec::new()),
        };
        let common = CommonWords::default();
        let hits = retrieve(&log, &common, "zebra", 10, None).unwrap();
        assert_eq!(hits.len(), 1);
        let with = with_neighbours(&log, hits.clone()).unwrap();
        let score = |id: &str| with.iter().find(|r| r.hit.id == id).map(|r| r.score);
        assert_eq!(with[0].hit.id, "m3");
        let hit = hits[0].score;
        for (id, share) in [
            ("m2", NEIGHBOUR_WEIGHT),
            ("m4", NEIGHBOUR_WEIGHT),
            ("m1", NEIGHBOUR_WEIGHT * NEIGHBOUR_DECAY),
            ("m5", NEIGHBOUR_WEIGHT * NEIGHBOUR_DECAY),
        ] {
            let got = score(id).unwrap_or_else(|| panic!("{id} missing from {with:?}"));
            assert!((got - hit * share).abs() < 1e-9, "{id}: {got}");
        }
        assert_eq!(score("m6"), None, "a third ring is not brought");
        assert_eq!(with.len(), 5);
    }

    /// A two-person chat: the two turns `opening`, then thirty short
    /// exchanges `filler` (each numbered) that name a speaker and nothing
    /// else.
    fn chat(opening: [&str; 2], filler: [&str; 2]) -> Log {
        let mut texts: Vec<String> = opening.map(String::from).to_vec();
        for i in 0..30 {
            texts.extend(filler.map(|f| format!("{f} {i}")));
        }
        Log::new(HitSource::Message, texts)
    }

    /// The ids of the two best hits for `query`, once it is checked that no
    /// word starting with `speaker` was searched for.
    fn best_two_not_searching(log: &Log, query: &str, speaker: &str) -> Vec<String> {
        let hits = retrieve(log, &CommonWords::default(), query, 10, None).unwrap();
        assert!(
            !log.asked.borrow().iter().any(|t| t.starts_with(speaker)),
            "searched again for the speaker: {:?}",
            log.asked.borrow()
        );
        hits.iter().take(2).map(|h| h.hit.id.clone()).collect()
    }

    /// A two-person chat names the other speaker in many short turns; the
    /// second round must not raise them over the turn that answers (on
    /// LoCoMo such a turn, 8th by BM25, was ranked 494th).
    #[test]
    fn a_speakers_name_is_not_searched_again() {
        let log = chat(
            [
                "John: Well, Maria, growing up I saw how poor education hurt my town",
                "Maria: that is why you care about education, John?",
            ],
            ["John: Thanks, Maria! Talk soon", "Maria: Bye John"],
        );
        let ids = best_two_not_searching(&log, "why does John care about education", "maria");
        assert_eq!(ids, ["m2", "m1"]);
    }

    /// A label of a full name ("Fahim Khan:") is a speaker too: its second
    /// word, capitalized mid-line, is no name for the second round.
    #[test]
    fn no_word_of_a_full_name_label_is_searched_again() {
        let log = chat(
            [
                "Akib: so why do you cook so much, Fahim?",
                "Fahim Khan: my mother taught me to cook when I was young",
            ],
            ["Fahim Khan: haha ok", "Akib: see you"],
        );
        let mut ids = best_two_not_searching(&log, "why does Fahim cook", "khan");
        ids.sort();
        assert_eq!(ids, ["m1", "m2"]);
    }

    #[test]
    fn operations_do_not_bring_neighbours() {
        let log = Log {
            source: HitSource::Operation,
            texts: vec![
                "tests passed".into(),
                "the zebra import failed".into(),
                "deploy started".into(),
            ],
            asked: RefCell::new(Vec::new()),
        };
        let common = CommonWords::default();
        let hits = retrieve(&log, &common, "zebra", 10, None).unwrap();
        let with = with_neighbours(&log, hits.clone()).unwrap();
        assert_eq!(with, hits);
    }

    /// 3,000 operations, all with the common words "the" and "failed",
    /// three with the rare "zebra".
    fn zebra_log() -> Log {
        let texts = (0..3_000)
            .map(|i| match i % 1_000 {
                7 => format!("step {i}: the zebra import failed"),
                _ => format!("step {i}: the build failed"),
            })
            .collect();
        Log::new(HitSource::Operation, texts)
    }

    #[test]
    fn a_word_found_common_is_not_read_again() {
        let log = zebra_log();
        let common = CommonWords::default();
        let first = retrieve(&log, &common, "why did the zebra fail", 10, None).unwrap();
        assert!(log.asked.borrow().iter().any(|t| t.starts_with("fail")));
        assert_eq!(first.len(), 3, "only the zebra records: {first:?}");
        log.asked.borrow_mut().clear();
        let again = retrieve(&log, &common, "why did the zebra fail", 10, None).unwrap();
        assert_eq!(again, first);
        let asked = log.asked.borrow().clone();
        assert!(!asked.iter().any(|t| t.starts_with("fail")), "{asked:?}");
        // When every word is common, the rarest is still searched, known
        // or not.
        log.asked.borrow_mut().clear();
        let only = retrieve(&log, &common, "fail", 5, None).unwrap();
        assert_eq!(only.len(), 5);
        assert!(log.asked.borrow().iter().any(|t| t.starts_with("fail")));
    }

    /// A budget the rare word's matches leave mostly empty is filled with
    /// the records of the common words, below every rare match; without a
    /// budget that asks for it, or once the rare matches fill it, they are
    /// not searched.
    #[test]
    fn common_words_fill_what_the_selective_ones_leave() {
        let log = zebra_log();
        let common = CommonWords::default();
        let counter = crate::tokens::Heuristic::default();
        let budget = |tokens, fill: bool| Budget {
            tokens,
            counter: &counter,
            fill: fill.then_some(tokens),
        };
        let q = "why did the zebra fail";
        let filled = retrieve(&log, &common, q, 100, Some(budget(2_000, true))).unwrap();
        assert_eq!(filled.len(), 100, "filled with the common word's matches");
        let zebra: Vec<&str> = filled[..3].iter().map(|r| r.hit.id.as_str()).collect();
        assert!(
            filled[..3].iter().all(|r| r.hit.text.contains("zebra")),
            "{zebra:?} lead"
        );
        assert!(filled[3].score < filled[2].score);
        assert!(filled[3..].iter().all(|r| r.hit.text.contains("failed")));
        // Not asked to fill: the rare word's matches alone.
        let bare = retrieve(&log, &common, q, 100, Some(budget(2_000, false))).unwrap();
        assert_eq!(bare.len(), 3);
        // A budget the three matches fill asks for nothing more.
        let small = retrieve(&log, &common, q, 100, Some(budget(20, true))).unwrap();
        assert_eq!(small.len(), 3);
    }

    /// A turn early in a long chat that matches a question best, and a
    /// later one that matches it a little less well (longer, so BM25 gives
    /// it less).
    fn early_and_late() -> Log {
        let mut texts = vec!["the project should take long: six weeks".to_string()];
        texts.extend((0..40).map(|i| format!("unrelated turn {i}")));
        texts.push("so the project may take long, as planned".into());
        Log::new(HitSource::Message, texts)
    }

    #[test]
    fn a_question_from_inside_the_conversation_is_ranked_without_recency() {
        let log = early_and_late();
        let common = CommonWords::default();
        let best = |q: &str| {
            retrieve(&log, &common, q, 10, None).unwrap()[0]
                .hit
                .id
                .clone()
        };
        // Put by no one in particular: the later of two close matches wins.
        assert_eq!(best("how long should the project take"), "m42");
        // Asked by someone in it about what was said: the best match wins,
        // however early it was said.
        assert_eq!(best("how long did I say the project should take"), "m1");
        assert_eq!(best("how long did you say the project should take"), "m1");
    }

    #[test]
    fn first_and_second_person_words_mark_a_question_from_inside() {
        for q in [
            "How long did I say it would take?",
            "What did you recommend?",
            "what's my budget",
            "I'm asking about our plan",
            "Where did we meet?",
        ] {
            assert_eq!(recency_weight(q), 0.0, "{q}");
        }
        for q in [
            "Which US cities did John visit?",
            "What is Kate's job?",
            "current deploy status",
            "iPhone or Mymail?",
        ] {
            assert!(recency_weight(q) > 0.0, "{q}");
        }
    }
}

mod raise_tests {
    use crate::assemble::retrieve::{Ranked, raise};

    #[test]
    fn the_picked_records_are_raised_by_the_factor_and_the_rest_keep_their_order() {
        let out = raise(
            vec![
                Ranked::message("a", 1.0),
                Ranked::message("b", 0.9),
                Ranked::message("c", 0.8),
                Ranked::message("d", 0.7),
            ],
            1.5,
            |i, r| i == 3 || r.hit.id == "c",
        );
        let order: Vec<(&str, f64)> = out.iter().map(|r| (r.hit.id.as_str(), r.score)).collect();
        assert_eq!(order[0].0, "c");
        assert!((order[0].1 - 1.2).abs() < 1e-9);
        assert_eq!(order[1].0, "d");
        assert!((order[1].1 - 1.05).abs() < 1e-9);
        assert_eq!(&order[2..], &[("a", 1.0), ("b", 0.9)]);
    }

    #[test]
    fn nothing_picked_leaves_the_ranking_as_it_was() {
        let out = raise(
            vec![Ranked::message("a", 1.0), Ranked::message("b", 0.5)],
            2.0,
            |_, _| false,
        );
        let ids: Vec<&str> = out.iter().map(|r| r.hit.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(out[1].score, 0.5);
    }
}
