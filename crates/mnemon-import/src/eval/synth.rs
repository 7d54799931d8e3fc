//! Synthetic datasets: multi-session conversations with planted facts and
//! questions about them, in four categories.
//!
//! - single-hop: one turn answers it;
//! - multi-hop: two turns in different sessions answer it together;
//! - temporal: the answer is when something happened (the session date);
//! - knowledge-update: a later turn replaces an earlier fact, and only the
//!   later turn is evidence.
//!
//! Filler turns reuse the same names, places and verbs, so retrieval has
//! distractors to beat, and conversations are long enough (about 30,000
//! tokens) that no method can simply include everything at 16K.

use super::{Conversation, Dataset, EvalSession, Question, Turn};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SPEAKERS: &[(&str, &str)] = &[
    ("Caroline", "Melanie"),
    ("Ravi", "Sofia"),
    ("Jonas", "Amara"),
    ("Keiko", "Mateo"),
    ("Elena", "Tobias"),
];
const PEOPLE: &[&str] = &[
    "Alice", "Bruno", "Chloe", "Dmitri", "Esther", "Farid", "Greta", "Hugo", "Ines", "Jasper",
    "Kira", "Lorenzo", "Maya", "Nikolai", "Olga", "Pavel",
];
const CITIES: &[&str] = &[
    "Lisbon", "Oslo", "Kyoto", "Denver", "Nairobi", "Montreal", "Porto", "Tallinn", "Austin",
    "Ghent", "Valencia", "Hobart",
];
const COMPANIES: &[&str] = &[
    "Acme Robotics",
    "Bluefin Labs",
    "Cedar Health",
    "Dunmore Foods",
    "Everlight Solar",
    "Foxglove Media",
    "Granite Bank",
    "Harbor Logistics",
];
const PETS: &[&str] = &[
    "Rex", "Miso", "Pickles", "Juniper", "Biscuit", "Nova", "Pepper", "Ziggy",
];
const ANIMALS: &[&str] = &[
    "beagle",
    "tabby cat",
    "parrot",
    "corgi",
    "rabbit",
    "greyhound",
];
const EVENTS: &[&str] = &[
    "marathon",
    "chess tournament",
    "pottery fair",
    "jazz festival",
    "hackathon",
];
const HOBBIES: &[&str] = &[
    "painting",
    "climbing",
    "baking sourdough",
    "learning Italian",
    "gardening",
    "running",
    "woodworking",
    "birdwatching",
];
const FILLER: &[&str] = &[
    "I spent most of the weekend {hobby} and it was surprisingly relaxing.",
    "{person} told me the weather in {city} has been strange lately.",
    "Work has been busy, but I finally finished the report I was dreading.",
    "Have you tried {hobby}? {person} keeps recommending it to everyone.",
    "We should plan a trip to {city} sometime next year, maybe in spring.",
    "I read an article about how people in {city} spend their evenings.",
    "{person} is thinking about changing jobs, but nothing is decided yet.",
    "My week was fine, mostly errands and a long call with {person}.",
    "I cooked a new recipe yesterday and it turned out better than expected.",
    "Do you remember when we talked about {hobby}? I tried it again.",
    "The new cafe near my place reminds me of one we visited in {city}.",
    "{person} said the company picnic was fun even though it rained.",
    "I have been sleeping badly, so I am trying to read before bed instead.",
    "Honestly the best part of my day was a walk by the river.",
];
/// Distractors: the planted people doing things close to the facts.
const NEAR: &[&str] = &[
    "{person} keeps talking about getting a {animal} one day, maybe next year.",
    "{person} had an interview at {company} but turned the offer down.",
    "{person} visited {city} for a conference and liked the food there.",
    "{person} is training for the {city} {event} but might not take part.",
    "{person} said {company} is hiring again and the office is in {city}.",
    "{person} used to live near {city} as a kid and still misses it.",
    "{person} watched the {event} on TV and thought it looked exhausting.",
];
/// A second sentence, so turns are as long as real ones.
const TAILS: &[&str] = &[
    "Anyway, how has your week been going so far?",
    "I keep meaning to write these things down so I do not forget them.",
    "It made me think about how quickly this year is going by.",
    "We can talk about it more when we meet up next time.",
    "Let me know what you think, I would really like your opinion.",
    "That reminded me of the long conversation we had last month.",
];

fn fill(rng: &mut Rng, template: &str, people: &[&str]) -> String {
    let person = if rng.below(10) < 6 {
        people[rng.below(people.len())]
    } else {
        rng.pick(PEOPLE)
    };
    let text = template
        .replace("{hobby}", rng.pick(HOBBIES))
        .replace("{person}", person)
        .replace("{city}", rng.pick(CITIES))
        .replace("{animal}", rng.pick(ANIMALS))
        .replace("{company}", rng.pick(COMPANIES))
        .replace("{event}", rng.pick(EVENTS));
    format!("{text} {}", rng.pick(TAILS))
}

/// A planted fact: its turn text, and where it should go.
struct Plant {
    session: usize,
    text: String,
}

/// `conversations` conversations of `sessions` sessions with about
/// `turns` turns each, from `seed`.
pub fn generate(seed: u64, conversations: usize, sessions: usize, turns: usize) -> Dataset {
    let mut rng = Rng(seed.wrapping_mul(0x9E3779B97F4A7C15).wrapping_add(1));
    let convs = (0..conversations)
        .map(|c| conversation(&mut rng, c, sessions.max(4), turns.max(10)))
        .collect();
    Dataset {
        conversations: convs,
    }
}

#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: second"
)]
fn conversation(rng: &mut Rng, c: usize, n_sessions: usize, n_turns: usize) -> Conversation {
    let (a, b) = SPEAKERS[c % SPEAKERS.len()];
    let mut people: Vec<&str> = PEOPLE.to_vec();
    // Shuffle so each conversation plants facts about different people.
    for i in (1..people.len()).rev() {
        let j = rng.below(i + 1);
        people.swap(i, j);
    }
    let mut plants: Vec<(Plant, Option<Plant>, String, String, &'static str)> = Vec::new();
    let late = |rng: &mut Rng, from: usize| from + 1 + rng.below(n_sessions - from - 1);
    for (k, person) in people.iter().take(8).enumerate() {
        let s1 = rng.below(n_sessions - 1);
        match k % 4 {
            0 => {
                let pet = rng.pick(PETS);
                let animal = rng.pick(ANIMALS);
                plants.push((
                    Plant {
                        session: s1,
                        text: format!("Big news: {person} adopted a {animal} and named it {pet}."),
                    },
                    None,
                    format!("What is the name of {person}'s {animal}?"),
                    pet.to_string(),
                    "single-hop",
                ));
            }
            1 => {
                let company = rng.pick(COMPANIES);
                let city = rng.pick(CITIES);
                let s2 = late(rng, s1);
                plants.push((
                    Plant {
                        session: s1,
                        text: format!("{person} just accepted an offer from {company}."),
                    },
                    Some(Plant {
                        session: s2,
                        text: format!("Fun fact, {company} has its headquarters in {city}."),
                    }),
                    format!("In which city is the headquarters of the company {person} joined?"),
                    city.to_string(),
                    "multi-hop",
                ));
            }
            2 => {
                let event = rng.pick(EVENTS);
                let city = rng.pick(CITIES);
                plants.push((
                    Plant {
                        session: s1,
                        text: format!("Today {person} took part in the {city} {event}."),
                    },
                    None,
                    format!("When did {person} take part in the {city} {event}?"),
                    String::new(),
                    "temporal",
                ));
            }
            _ => {
                let from = rng.pick(CITIES);
                let mut to = rng.pick(CITIES);
                while to == from {
                    to = rng.pick(CITIES);
                }
                let s2 = late(rng, s1);
                plants.push((
                    Plant {
                        session: s1,
                        text: format!("{person} lives in {from} and loves the neighbourhood."),
                    },
                    Some(Plant {
                        session: s2,
                        text: format!("{person} moved away from {from} and now lives in {to}."),
                    }),
                    format!("Where does {person} live now?"),
                    to.to_string(),
                    "knowledge-update",
                ));
            }
        }
    }
    let mut sessions: Vec<EvalSession> = Vec::new();
    let mut planted_ids: Vec<(Option<String>, Option<String>)> = vec![(None, None); plants.len()];
    for s in 0..n_sessions {
        let mut turns: Vec<Turn> = Vec::new();
        let planted_people = &people[..8];
        let mut texts: Vec<String> = (0..n_turns)
            .map(|_| {
                let t = if rng.below(3) == 0 {
                    rng.pick(NEAR)
                } else {
                    rng.pick(FILLER)
                };
                fill(rng, t, planted_people)
            })
            .collect();
        // Plant this session's facts at random positions.
        let mut slots: Vec<(usize, usize, bool)> = Vec::new();
        for (i, (p1, p2, ..)) in plants.iter().enumerate() {
            if p1.session == s {
                slots.push((i, rng.below(n_turns), true));
            }
            if let Some(p2) = p2
                && p2.session == s
            {
                slots.push((i, rng.below(n_turns), false));
            }
        }
        for (i, pos, first) in &slots {
            // Facts get a second sentence too, so their length gives them away
            // no more than their words do.
            let tail = rng.pick(TAILS);
            let plant = if *first {
                &mut plants[*i].0
            } else {
                plants[*i].1.as_mut().expect("second")
            };
            if !plant.text.ends_with(tail) {
                plant.text = format!("{} {tail}", plant.text);
            }
            texts.insert(*pos, plant.text.clone());
        }
        for (t, text) in texts.into_iter().enumerate() {
            let id = format!("D{}:{}", s + 1, t + 1);
            for (i, _, first) in &slots {
                let wanted = if *first {
                    &plants[*i].0.text
                } else {
                    &plants[*i].1.as_ref().expect("second").text
                };
                if *wanted == text {
                    if *first {
                        planted_ids[*i].0 = Some(id.clone());
                    } else {
                        planted_ids[*i].1 = Some(id.clone());
                    }
                }
            }
            turns.push(Turn {
                id,
                speaker: if t % 2 == 0 { a } else { b }.to_string(),
                text,
            });
        }
        sessions.push(EvalSession {
            id: format!("S{}", s + 1),
            date: format!(
                "2023-{:02}-{:02}T13:{:02}:00Z",
                1 + (s * 3) / 28 % 12,
                1 + (s * 3) % 28,
                rng.below(60)
            ),
            turns,
        });
    }
    let questions = plants
        .iter()
        .enumerate()
        .map(|(i, (p1, _, q, answer, category))| {
            let (first, second) = &planted_ids[i];
            let evidence: Vec<String> = match *category {
                // Only the later fact answers "now".
                "knowledge-update" => second.iter().cloned().collect(),
                _ => first.iter().chain(second.iter()).cloned().collect(),
            };
            let answer = if *category == "temporal" {
                sessions[p1.session].date[..10].to_string()
            } else {
                answer.clone()
            };
            Question {
                id: format!("q{}", i + 1),
                question: q.clone(),
                answer: serde_json::Value::String(answer),
                evidence,
                category: category.to_string(),
            }
        })
        .collect();
    Conversation {
        id: format!("c{}", c + 1),
        sessions,
        questions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_has_evidence_that_exists_and_output_is_deterministic() {
        let d = generate(7, 2, 6, 20);
        assert_eq!(d, generate(7, 2, 6, 20));
        let text = serde_json::to_string(&d).unwrap();
        let back = Dataset::from_json(&text, "synth").unwrap();
        assert_eq!(back, d);
        for c in &d.conversations {
            assert_eq!(c.questions.len(), 8);
            for q in &c.questions {
                let want = if q.category == "multi-hop" { 2 } else { 1 };
                assert_eq!(q.evidence.len(), want, "{q:?}");
            }
        }
    }
}
