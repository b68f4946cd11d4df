"""A seeded generator of simple English for the kvlab tiny transformer.

No downloads: every document is built from the word lists and templates below
by a `random.Random(seed)`, so the same seed always gives the same corpus.

Six kinds of documents:

- story:    short stories with characters, objects and pronouns ("Tom has a red
            ball. He kicks it to Mia."), so that "it" attending back to "the ball"
            is something the model has to learn.
- dialogue: two characters talking in quotes, with pronouns across turns.
- everyday: ordinary English sentences over the 1,000 most frequent English words
            (`everyday.py`; also inside chat small talk).
- pronoun:  texts where what follows "it", "he", "she", "they" depends on the
            antecedent ("The dog was hungry. It barked."; "Tom had a kite and Mia had
            a drum. She played her drum."), see `everyday.py`.
- drill:    "remember this list: frog 3 red lamp ..." and, some turns later, the
            list again: dense practice for copying (induction heads).
- episode:  a long chat between "user" and "bot". Early on, the user states a fact
            (a door code such as 4719, and sometimes a name); many turns later the
            user asks for it again. Answering needs the old tokens: evict them from
            the KV cache and the answer is a guess.

The door code is always introduced and answered with the same cue,
"the door has code 4719", and the word "code" appears nowhere else, so the
answer is a clean copy: find the earlier " code", copy the digits after it.
Codes have four distinct digits (5040 possible codes; chance = 1/5040).
A fixed fifth of all codes is held out: training never sees them.

    python models/corpus.py --out models/data/corpus_sample.txt --n 200
"""

from __future__ import annotations

import argparse
import itertools
import random

from everyday import everyday, pronoun_story

# ----------------------------------------------------------------------------
# word lists

BOYS = ["Tom", "Sam", "Ben", "Max", "Leo", "Jack", "Finn", "Leon", "Noah", "Theo", "Hugo", "Alex"]
GIRLS = ["Mia", "Lily", "Ava", "Zoe", "Ella", "Anna", "Emma", "Lucy", "Rosa", "Nora", "Ruby", "Ivy"]
USER_NAMES = [
    "Zora",
    "Milo",
    "Nadia",
    "Oskar",
    "Priya",
    "Tariq",
    "Greta",
    "Hiro",
    "Lena",
    "Pablo",
    "Sofia",
    "Omar",
    "Yuki",
    "Ines",
    "Karl",
    "Dana",
    "Felix",
    "Maya",
    "Ravi",
    "Clara",
]
THINGS = [
    "ball",
    "box",
    "kite",
    "cup",
    "hat",
    "book",
    "apple",
    "car",
    "boat",
    "drum",
    "lamp",
    "doll",
    "bell",
    "cake",
    "sock",
    "coat",
    "bag",
    "toy",
    "shell",
    "stone",
]
ANIMALS = ["cat", "dog", "bird", "fish", "frog", "duck", "horse", "mouse", "rabbit", "fox"]
COLORS = ["red", "blue", "green", "yellow", "black", "white", "pink", "brown"]
SIZES = ["big", "small", "old", "new", "soft", "shiny", "little", "heavy"]
PLACES = ["park", "garden", "kitchen", "school", "river", "forest", "shop", "beach", "farm", "house"]
FOODS = ["apples", "bread", "soup", "rice", "cheese", "pears", "cake", "milk", "eggs", "nuts"]
WEATHER = ["sunny", "rainy", "cold", "warm", "windy", "cloudy"]
FEELINGS = ["happy", "sad", "tired", "hungry", "glad", "sleepy", "calm", "excited"]

ALL_CODES = ["".join(p) for p in itertools.permutations("0123456789", 4)]  # 5040 codes, distinct digits
_split = random.Random(1234)
_shuffled = ALL_CODES[:]
_split.shuffle(_shuffled)
HELDOUT_CODES = sorted(_shuffled[: len(_shuffled) // 5])  # never in training
TRAIN_CODES = sorted(_shuffled[len(_shuffled) // 5 :])


def _person(rng: random.Random, avoid: tuple[str, ...] = ()) -> tuple[str, str, str, str]:
    """A character: (name, he/she, him/her, his/her)."""
    while True:
        if rng.random() < 0.5:
            p = (rng.choice(BOYS), "he", "him", "his")
        else:
            p = (rng.choice(GIRLS), "she", "her", "her")
        if p[0] not in avoid:
            return p


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


# ----------------------------------------------------------------------------
# stories: an object ("it") and one or two characters ("he", "she")


def story(rng: random.Random) -> str:
    """A short story, 4 to 9 sentences, with pronouns that point back."""
    a, he, him, his = _person(rng)
    b, she, her, her_pos = _person(rng, avoid=(a,))
    if rng.random() < 0.5:
        thing = rng.choice(THINGS)
    else:
        thing = rng.choice(ANIMALS)
    adj = rng.choice(COLORS + SIZES)
    place = rng.choice(PLACES)
    s = [f"{a} had a {adj} {thing}."]
    middle = [
        f"{_cap(he)} took it to the {place}.",
        f"The {thing} was {adj}, and {he} liked it very much.",
        f"One day {he} lost it in the {place}.",
        f"{_cap(he)} looked for it everywhere.",
        f"{b} found the {thing} under a tree.",
        f"{_cap(she)} gave it back to {a}.",
        f"{a} was {rng.choice(FEELINGS)}, so {he} hugged {her}.",
        f"Then {he} showed it to {b}.",
        f"{b} wanted to hold the {thing} too.",
        f"{_cap(she)} held it for a while and gave it back.",
        f"It was a {rng.choice(WEATHER)} day in the {place}.",
        f"{a} put the {thing} in {his} bag.",
        f"Later {he} gave it to {b}, and {she} kept it.",
        f"{b} said it was the best {thing} in the world.",
        f"{_cap(his)} mom asked where the {thing} was.",
        f"{a} said that it was with {b}.",
    ]
    k = rng.randint(3, 8)
    s += rng.sample(middle, k)
    s.append(
        rng.choice(
            [
                f"In the end, {a} and {b} were {rng.choice(FEELINGS)}.",
                f"That night {a} slept with the {thing} next to {him}.",
                "The end.",
                f"{b} and {a} played with it all day.",
            ]
        )
    )
    return " ".join(s)


def dialogue(rng: random.Random) -> str:
    """Two characters talk; "it" and "he/she" refer across the quotes."""
    a, he, him, his = _person(rng)
    b, she, her, her_pos = _person(rng, avoid=(a,))
    thing = rng.choice(THINGS + ANIMALS)
    color = rng.choice(COLORS)
    place = rng.choice(PLACES)
    lines = [
        f'{a} said, "I have a {color} {thing}."',
        f'{b} asked, "Where did you get it?"',
        f'"I found it at the {place}," {he} said.',
        f'"Can I see it?" {b} asked.',
        f"{a} gave the {thing} to {b}. {_cap(she)} looked at it and smiled.",
        f'"It is very nice," {she} said. "Is it {rng.choice(SIZES)}?"',
        f'"Yes, it is," said {a}.',
        f"{b} gave it back to {him}.",
        f'"Thank you," {a} said, and {he} put it away.',
    ]
    k = rng.randint(4, len(lines))
    return " ".join(lines[:k])


# ----------------------------------------------------------------------------
# chat episodes: a fact early, a question much later


def _small_talk(rng: random.Random) -> list[str]:
    """One user turn and one bot turn, without digits and without the word "code"."""
    thing = rng.choice(THINGS)
    animal = rng.choice(ANIMALS)
    food = rng.choice(FOODS)
    color = rng.choice(COLORS)
    place = rng.choice(PLACES)
    feel = rng.choice(FEELINGS)
    options = [
        ("tell me a story.", story(rng)),
        (f"tell me a story about a {animal}.", story(rng)),
        ("can you tell me another story?", dialogue(rng)),
        (f"do you like {food}?", rng.choice([f"yes, i like {food} a lot.", f"no, i do not like {food}."])),
        (f"what color is a {thing}?", f"a {thing} can be any color. mine is {color}."),
        (f"i went to the {place} today.", f"that sounds nice. what did you do at the {place}?"),
        (f"i saw a {animal} at the {place}.", f"a {animal}! was it {rng.choice(SIZES)}?"),
        (f"i feel {feel}.", f"i see. why do you feel {feel}?"),
        (f"the weather is {rng.choice(WEATHER)}.", f"then take a {rng.choice(['coat', 'hat', 'bag'])} with you."),
        (f"i lost my {thing}.", f"where did you see it last? maybe it is in the {place}."),
        (f"my {animal} is {color}.", f"a {color} {animal} is rare. does it have a name?"),
        ("what should i eat?", f"you could eat {food} or {rng.choice(FOODS)}."),
        ("thank you.", "you are welcome."),
        ("tell me about your day.", everyday(rng)),
        ("what happened next?", everyday(rng, (2, 4))),
        ("tell me a short story.", pronoun_story(rng)),
        ("who did what?", pronoun_story(rng)),
    ]
    u, b = rng.choice(options)
    return [f"user: {u}", f"bot: {b}"]


def code_statement(code: str, rng: random.Random) -> list[str]:
    return [
        rng.choice(
            [
                f"user: please remember this. the door has code {code}.",
                f"user: the door has code {code}. do not forget it.",
                f"user: note that the door has code {code}.",
            ]
        ),
        rng.choice(["bot: ok, i will remember it.", "bot: got it.", "bot: sure, i will keep it in mind."]),
    ]


CODE_QUESTIONS = [
    "user: what number opens the door?",
    "user: how do i open the door again?",
    "user: i forgot how to open the door. can you help?",
    "user: what did i tell you about the door?",
]


def episode(
    rng: random.Random, filler_turns: int, codes: list[str] = TRAIN_CODES, with_name: bool | None = None
) -> dict:
    """A chat: greeting, facts, `filler_turns` small-talk exchanges, then the questions.

    Returns {"text", "code", "name", "prompt", "answer"}: `prompt` ends with "bot:"
    right before the answer to the door-code question, and `text` == prompt + answer + rest.
    """
    code = rng.choice(codes)
    name = rng.choice(USER_NAMES)
    if with_name is None:
        with_name = rng.random() < 0.5
    turns = ["user: hello!", rng.choice(["bot: hello! how can i help?", "bot: hi there."])]
    if with_name:
        turns += [f"user: my name is {name}.", f"bot: nice to meet you, {name}."]
    turns += code_statement(code, rng)
    for _ in range(filler_turns):
        turns += _small_talk(rng)
    if with_name and rng.random() < 0.5:
        turns += ["user: what is my name?", f"bot: your name is {name}."]
    turns.append(rng.choice(CODE_QUESTIONS))
    prompt = "\n".join(turns) + "\nbot:"
    answer = f" the door has code {code}."
    rest = "\nuser: thank you!\nbot: you are welcome."
    return {
        "text": prompt + answer + rest,
        "code": code,
        "name": name if with_name else None,
        "prompt": prompt,
        "answer": answer,
        "rest": rest,
        "filler": filler_turns,
    }


# ----------------------------------------------------------------------------
# copy drills: a random list said once, repeated later (dense practice for induction)

DRILL_WORDS = THINGS + ANIMALS + COLORS + SIZES + PLACES + list("0123456789")


def drill(rng: random.Random, filler_turns: int = 0) -> dict:
    """ "repeat after me" with a random list of 4..24 words and digits; every repeated token
    can only be predicted by finding it in the list and copying what followed."""
    seq = " ".join(rng.choice(DRILL_WORDS) for _ in range(rng.randint(4, 24)))
    turns = [
        rng.choice([f"user: remember this list: {seq}.", f"user: here is a list: {seq}."]),
        rng.choice(["bot: ok, i will remember it.", "bot: got it."]),
    ]
    for _ in range(filler_turns):
        turns += _small_talk(rng)
    turns += [rng.choice(["user: say the list again.", "user: what was the list?"]), f"bot: {seq}."]
    return {"text": "\n".join(turns), "filler": filler_turns}


# ----------------------------------------------------------------------------
# the corpus


def documents(seed: int, n: int, max_filler: int = 14) -> list[dict]:
    """`n` documents: 10% stories, 5% dialogues, 20% everyday English, 15% pronoun stories,
    15% copy drills, 35% chat episodes (drills and episodes with 0..max_filler small-talk
    turns between fact and question)."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        r = rng.random()
        if r < 0.10:
            docs.append({"kind": "story", "text": story(rng)})
        elif r < 0.15:
            docs.append({"kind": "dialogue", "text": dialogue(rng)})
        elif r < 0.35:
            docs.append({"kind": "everyday", "text": everyday(rng)})
        elif r < 0.50:
            docs.append({"kind": "pronoun", "text": pronoun_story(rng)})
        elif r < 0.65:
            d = drill(rng, rng.randint(0, max_filler))
            d["kind"] = "drill"
            docs.append(d)
        else:
            ep = episode(rng, rng.randint(0, max_filler))
            ep["kind"] = "episode"
            docs.append(ep)
    return docs


def heldout_episodes(seed: int, n: int, filler_turns: int) -> list[dict]:
    """Evaluation episodes: held-out codes, a seed that training never uses."""
    rng = random.Random(10_000_019 + seed)
    return [episode(rng, filler_turns, codes=HELDOUT_CODES) for _ in range(n)]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    text = "\n\n".join(d["text"] for d in documents(args.seed, args.n))
    if args.out == "-":
        print(text)
    else:
        import os

        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {len(text):,} chars to {args.out}")
