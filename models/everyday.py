"""Everyday English for the kvlab tiny model: the most frequent English words in sentences.

Two seeded generators, no downloads, used by `corpus.py`:

- `everyday(rng)`: a few sentences of ordinary English built from word classes and
  sentence frames. The word classes below hold the 1,000 most frequent English words
  of `models/words/common_en.txt` (wordfreq 3.1.1, data CC BY-SA 4.0), sorted by hand
  into nouns, verbs, adjectives, adverbs and function words, except single letters,
  swear words, and "code" (the door-code cue must stay unique to the door-code chats).
  The frames put words at the start of sentences too, so capitalised forms ("The",
  "Why", "Please", "Dinner") are seen as often as a reader types them.
- `pronoun_story(rng)`: short texts where the word after "it", "he", "she" or "they"
  depends on what the pronoun refers to: "The dog was hungry. It barked." (an animal's
  own verb), "Tom had a kite and Mia had a drum. She played her drum." (two people of
  different genders, each with their own thing), so that finding the antecedent pays
  off in the next-token loss. Heads that do this are measured by `evaluate.py`.

No digits, and never the word "code", in anything generated here.
"""

from __future__ import annotations

import random

# ----------------------------------------------------------------------------
# names (everyday first names; the gender of each is what "he"/"she" must match)

MEN = "John David James Michael George Paul Tom Sam Ben Max Jack Leo Peter Mark Daniel Adam Harry Tony Chris Steve".split()
WOMEN = (
    "Mary Sarah Anna Emma Lucy Kate Mia Lily Ella Rose Jane Alice Laura Emily Grace Helen Amy Julia Susan Nina".split()
)
CITIES = "London Paris Washington York Berlin Rome Boston Sydney Tokyo Madrid".split()
COUNTRIES = "America England China India Australia Europe France Spain Italy Japan Canada Germany".split()
NATIONALITY = "American British English French European Chinese Indian Australian".split()

# ----------------------------------------------------------------------------
# nouns

PEOPLE = (
    "man woman girl boy child baby friend teacher doctor student player officer president minister "
    "director member mother father brother sister son daughter wife husband king guy person neighbour "
    "driver worker manager writer artist nurse farmer police officer guest kid mom dad boss"
).split()
PEOPLE = [p for p in PEOPLE if p != "police"]
PEOPLE_PL = (
    "people men women children kids friends students players members parents boys girls guys fans "
    "teachers doctors workers officers neighbours families"
).split()
THINGS = (
    "car book phone door window table bed box ball cup card picture paper bag key chair bottle glass "
    "letter computer camera bike watch clock shirt hat coat shoe dress ring gift plate knife lamp "
    "bag ticket map photo pen note bill report list page record model piece machine radio"
).split()
THINGS_PL = [t + ("es" if t.endswith(("x", "ch", "sh")) else "s") for t in THINGS if t not in ("knife",)] + [
    "knives",
    "products",
    "books",
    "boxes",
    "games",
    "things",
]
PLACES = (
    "school church hospital park office shop store market city town village house room kitchen garden "
    "beach river sea lake forest field street road station club university college court bank centre "
    "center hotel library restaurant building farm airport museum country world area site ground "
    "island hill corner"
).split()
FOODS = "bread milk soup rice cheese fruit meat fish cake coffee tea water juice eggs apples chicken salad pizza dinner lunch breakfast".split()
# abstract nouns that take "the" and a verb like "is important"
ABSTRACT = (
    "time life work money music water food air fire light power energy health love news information "
    "history business education research security technology science art culture language law policy "
    "society government market data quality value interest support attention experience success truth "
    "respect growth pain death sense fun stuff oil blood gold space weather nature peace freedom "
    "development management production performance training practice evidence knowledge service"
).split()
COUNT_ABSTRACT = (
    "idea question problem answer reason chance choice decision plan story point fact matter issue "
    "result case example situation word name number line list side part kind type form level rate "
    "size amount range step goal role term view mind lot bit moment minute hour day week month year "
    "season period date morning night summer winter age future past end start top middle front deal "
    "event meeting party match race test review article post title release version design project "
    "program process system job career course class study lesson game song movie film video show "
    "rule way thing account risk offer response relationship change increase loss access base mark "
    "goal practice truth voice style sound character figure source option trip holiday weekend"
).split()
GROUPS = (
    "government company team group party council union army police league industry department "
    "community society media press staff club court board bank market state county district nation "
    "family school university"
).split()
BODY = "hand head face heart eyes hair body arm leg back feet mouth".split()
TIMES = (
    "today yesterday tomorrow tonight now later soon again early late once sometimes often always "
    "usually never recently already finally"
).split()
TIME_PHRASES = [
    "last week",
    "last year",
    "last month",
    "last night",
    "this morning",
    "this week",
    "this year",
    "next week",
    "next year",
    "next month",
    "every day",
    "every week",
    "in the morning",
    "in the evening",
    "at night",
    "on Monday",
    "on Friday",
    "on Sunday",
    "in January",
    "in February",
    "in March",
    "in April",
    "in June",
    "in July",
    "in August",
    "in September",
    "in October",
    "in November",
    "in December",
    "in the summer",
    "after work",
    "before lunch",
    "during the game",
    "for a few hours",
    "for a long time",
    "a few days ago",
    "two weeks ago",
    "all day",
    "the whole night",
    "for three years",
    "for the first time",
    "at the end of the day",
    "since last year",
    "until the end of the month",
]

# ----------------------------------------------------------------------------
# adjectives and adverbs

ADJ = (
    "good new first last long great little own other old right big high different small large next "
    "early young important few public bad same able free full special strong sure clear true whole "
    "real best better hard easy happy local late major main nice hot cold warm cool dark light black "
    "white red blue green brown yellow beautiful perfect amazing simple common popular private "
    "personal serious poor rich safe huge deep modern natural original recent single similar certain "
    "current daily entire final former general human international national social political "
    "economic financial legal medical official professional central federal foreign available "
    "possible likely ready wrong dead alive busy crazy difficult easy fast slow low short tall quiet "
    "loud funny strange empty fresh clean dirty expensive cheap heavy sad tired hungry angry afraid "
    "excited interesting open closed missing fine okay lucky famous favourite"
).split()
ADV = (
    "really very just also still too even only almost actually probably especially exactly simply "
    "quite pretty rather maybe perhaps certainly clearly finally quickly slowly carefully suddenly "
    "together alone instead however already enough"
).split()

# ----------------------------------------------------------------------------
# verbs: base, past, past participle (regular forms are derived)

_IRREGULAR = {
    "be": ("was", "been"),
    "have": ("had", "had"),
    "do": ("did", "done"),
    "say": ("said", "said"),
    "go": ("went", "gone"),
    "get": ("got", "got"),
    "make": ("made", "made"),
    "know": ("knew", "known"),
    "think": ("thought", "thought"),
    "take": ("took", "taken"),
    "see": ("saw", "seen"),
    "come": ("came", "come"),
    "give": ("gave", "given"),
    "find": ("found", "found"),
    "tell": ("told", "told"),
    "feel": ("felt", "felt"),
    "become": ("became", "become"),
    "leave": ("left", "left"),
    "put": ("put", "put"),
    "mean": ("meant", "meant"),
    "keep": ("kept", "kept"),
    "let": ("let", "let"),
    "begin": ("began", "begun"),
    "show": ("showed", "shown"),
    "hear": ("heard", "heard"),
    "run": ("ran", "run"),
    "hold": ("held", "held"),
    "bring": ("brought", "brought"),
    "write": ("wrote", "written"),
    "sit": ("sat", "sat"),
    "stand": ("stood", "stood"),
    "lose": ("lost", "lost"),
    "pay": ("paid", "paid"),
    "meet": ("met", "met"),
    "lead": ("led", "led"),
    "read": ("read", "read"),
    "buy": ("bought", "bought"),
    "build": ("built", "built"),
    "send": ("sent", "sent"),
    "fall": ("fell", "fallen"),
    "cut": ("cut", "cut"),
    "win": ("won", "won"),
    "sell": ("sold", "sold"),
    "hit": ("hit", "hit"),
    "eat": ("ate", "eaten"),
    "drive": ("drove", "driven"),
    "break": ("broke", "broken"),
    "speak": ("spoke", "spoken"),
    "teach": ("taught", "taught"),
    "catch": ("caught", "caught"),
    "drink": ("drank", "drunk"),
    "sleep": ("slept", "slept"),
    "sing": ("sang", "sung"),
    "swim": ("swam", "swum"),
    "fly": ("flew", "flown"),
    "throw": ("threw", "thrown"),
    "forget": ("forgot", "forgotten"),
    "choose": ("chose", "chosen"),
    "wear": ("wore", "worn"),
    "understand": ("understood", "understood"),
    "spend": ("spent", "spent"),
    "set": ("set", "set"),
    "grow": ("grew", "grown"),
    "draw": ("drew", "drawn"),
    "shoot": ("shot", "shot"),
    "fight": ("fought", "fought"),
    "die": ("died", "died"),
    "hide": ("hid", "hidden"),
    "ride": ("rode", "ridden"),
    "wake": ("woke", "woken"),
}

# transitive with a concrete thing as object
V_THING = (
    "buy sell find lose bring take make build open close break carry hold keep use need want see "
    "watch check clean move put send show share cut fix cover hit drop pay leave like love hate get "
    "have pick choose wear draw hide throw catch order return miss enjoy look"
).split()
V_THING = [v for v in V_THING if v != "look"]
# transitive with an abstract object
V_IDEA = (
    "understand explain discuss change support follow consider accept believe remember forget learn "
    "know share answer ask review improve increase reduce create provide include offer release "
    "continue report lead manage control plan decide test win lose pass save start finish stop "
    "hear read write study present receive expect allow add describe develop produce protect "
    "prepare mention need want love like hate enjoy check"
).split()
V_INTRANS = (
    "come go arrive leave stay sleep wait work play run walk talk sit stand live die fall move smile "
    "laugh cry listen agree fight travel drive eat drink read write sing dance swim return happen "
    "begin win lose try help"
).split()
# verbs followed by "to" + verb
V_TO = "want need try decide hope plan start begin like love hate forget remember seem agree".split()


def _past(v: str) -> str:
    if v in _IRREGULAR:
        return _IRREGULAR[v][0]
    if v.endswith("e"):
        return v + "d"
    if v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ied"
    if v in ("stop", "plan", "drop", "admit", "shop", "hug", "chat", "fit", "kick") or (
        len(v) == 3 and v[-1] in "bdgmnpt" and v[-2] in "aeiou" and v[-3] not in "aeiou"
    ):
        return v + v[-1] + "ed"
    return v + "ed"


def _pp(v: str) -> str:
    return _IRREGULAR[v][1] if v in _IRREGULAR else _past(v)


def _third(v: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if v in special:
        return special[v]
    if v.endswith(("s", "x", "ch", "sh", "o")):
        return v + "es"
    if v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ies"
    return v + "s"


def _ing(v: str) -> str:
    special = {"be": "being", "die": "dying", "see": "seeing", "lie": "lying", "agree": "agreeing"}
    if v in special:
        return special[v]
    if v.endswith("e") and not v.endswith("ee"):
        return v[:-1] + "ing"
    if v in ("stop", "plan", "drop", "shop", "run", "sit", "swim", "win", "begin", "put", "cut", "hit", "get", "set"):
        return v + v[-1] + "ing"
    return v + "ing"


def _plural(n: str) -> str:
    irregular = {
        "child": "children",
        "man": "men",
        "woman": "women",
        "person": "people",
        "life": "lives",
        "story": "stories",
        "party": "parties",
        "body": "bodies",
        "company": "companies",
        "country": "countries",
        "city": "cities",
        "family": "families",
        "study": "studies",
        "copy": "copies",
    }
    if n in irregular:
        return irregular[n]
    if n.endswith(("s", "x", "ch", "sh")):
        return n + "es"
    if n.endswith("y") and n[-2] not in "aeiou":
        return n[:-1] + "ies"
    return n + "s"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


# ----------------------------------------------------------------------------
# sentence frames


def _subject(rng: random.Random) -> tuple[str, bool]:
    """(subject, third person singular?)"""
    r = rng.random()
    if r < 0.35:
        s = rng.choice(["I", "you", "we", "they"])
        return s, False
    if r < 0.55:
        return rng.choice(["he", "she"]), True
    if r < 0.7:
        return rng.choice(MEN + WOMEN), True
    if r < 0.8:
        return rng.choice(["my", "your", "our", "his", "her", "their"]) + " " + rng.choice(PEOPLE), True
    if r < 0.9:
        return "the " + rng.choice(PEOPLE), True
    return rng.choice(["the", "my", "our", "some", "many", "most", "all the", "both"]) + " " + rng.choice(
        PEOPLE_PL
    ), False


def _obj_thing(rng: random.Random) -> str:
    r = rng.random()
    det = rng.choice(["the", "my", "your", "his", "her", "our", "their", "this", "that", "a", "a", "the"])
    if r < 0.2:
        return (
            rng.choice(["the", "some", "these", "those", "all the", "two", "three", "many", "a few"])
            + " "
            + rng.choice(THINGS_PL)
        )
    if r < 0.45:
        adj = rng.choice(ADJ)
        if det == "a":
            return _a(adj) + " " + rng.choice(THINGS)
        return f"{det} {adj} {rng.choice(THINGS)}"
    if det == "a":
        return _a(rng.choice(THINGS))
    return det + " " + rng.choice(THINGS)


def _obj_idea(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return (
            rng.choice(["the", "this", "that", "your", "our", "their", "the same", "the whole"])
            + " "
            + rng.choice(COUNT_ABSTRACT)
        )
    if r < 0.7:
        return "the " + rng.choice(ADJ) + " " + rng.choice(COUNT_ABSTRACT)
    return rng.choice(["the", "more", "some", "enough", "their", "our"]) + " " + rng.choice(ABSTRACT)


def _place(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.15:
        return rng.choice(["home", "work", "school", "church", "bed"])
    if r < 0.25:
        return rng.choice(CITIES + COUNTRIES)
    return (
        rng.choice(["the", "the", "a", "my", "our", "their", "the old", "the new", "the big", "the little"])
        + " "
        + rng.choice(PLACES)
    )


def _when(rng: random.Random) -> str:
    return rng.choice(TIMES) if rng.random() < 0.5 else rng.choice(TIME_PHRASES)


def _verb_present(v: str, third: bool, subj: str) -> str:
    if v == "be":
        return "am" if subj == "I" else ("is" if third else "are")
    return _third(v) if third else v


def _frame(rng: random.Random) -> str:
    subj, third = _subject(rng)
    k = rng.randrange(34)
    if k == 30:
        return rng.choice(EXTRA).format(
            name=rng.choice(MEN + WOMEN),
            man=rng.choice(MEN),
            woman=rng.choice(WOMEN),
            place=_place(rng),
            thing=rng.choice(THINGS),
        )
    if k == 31:
        be = (
            ("am" if subj == "I" else "is" if third else "are")
            if rng.random() < 0.5
            else ("was" if third or subj == "I" else "were")
        )
        v = rng.choice(V_THING + ["read", "write", "do", "make", "try", "use", "take", "give", "see", "say"])
        return f"{_cap(subj)} {be} {_ing(v)} {_obj_thing(rng)} {rng.choice(['right now', 'at the moment', 'again', 'for ' + rng.choice(['me', 'us', 'them', 'him', 'her', 'the kids']), 'in ' + _place(rng)])}."
    if k == 32:
        v = rng.choice(
            V_INTRANS + ["think", "look", "come", "go", "wait", "live", "talk", "run", "start", "feel", "meet", "visit"]
        )
        return f"{rng.choice(['I like', 'We love', 'They hate', 'She enjoys', 'He started', 'Everyone stopped', 'Nobody likes', 'Keep'])} {_ing(v)} {rng.choice(TIMES + ['with friends', 'at home', 'in the rain', 'together', 'alone'])}."
    if k == 33:
        pl = _plural(rng.choice(COUNT_ABSTRACT))
        return f"{rng.choice(['There are', 'There were', 'We had', 'They found', 'I have', 'You will see'])} {rng.choice(['many', 'some', 'a few', 'several', 'no', 'more', 'too many', 'lots of', 'two', 'three', 'four', 'five', 'six', 'seven', 'ten'])} {pl} {rng.choice(['in', 'about', 'for', 'at', 'from'])} {_place(rng) if rng.random() < 0.5 else _obj_idea(rng)}."
    if k == 0:
        return f"{_cap(subj)} {_past(rng.choice(V_THING))} {_obj_thing(rng)} {_when(rng)}."
    if k == 1:
        return (
            f"{_cap(subj)} {_verb_present(rng.choice(V_TO), third, subj)} to {rng.choice(V_THING)} {_obj_thing(rng)}."
        )
    if k == 2:
        return f"The {rng.choice(ADJ)} {rng.choice(PEOPLE)} {_past(rng.choice(['go', 'walk', 'run', 'drive', 'come', 'return', 'move']))} to {_place(rng)}."
    if k == 3:
        return f"{rng.choice(['I think', 'I know', 'We believe', 'Everyone knows', 'Nobody thinks', 'They say', 'It seems'])} that the {rng.choice(ABSTRACT + COUNT_ABSTRACT)} is {rng.choice(ADV)} {rng.choice(ADJ)}."
    if k == 4:
        return f"{rng.choice(['Can', 'Could', 'Would', 'Will'])} you {rng.choice(V_THING)} {_obj_thing(rng)}, please?"
    if k == 5:
        return f"{rng.choice(['Why', 'When', 'Where', 'How'])} did {subj if subj != 'I' else 'I'} {rng.choice(V_THING + V_IDEA)} {_obj_thing(rng) if rng.random() < 0.5 else _obj_idea(rng)}?"
    if k == 6:
        return f"{_cap(rng.choice(V_THING))} {_obj_thing(rng)} before you {rng.choice(V_INTRANS)}."
    if k == 7:
        return f"There {'is' if rng.random() < 0.5 else 'was'} {_a(rng.choice(ADJ))} {rng.choice(THINGS + PLACES)} {rng.choice(['near', 'in', 'behind', 'next to', 'across from', 'outside', 'inside'])} {_place(rng)}."
    if k == 8:
        return f"{_cap(subj)} {rng.choice(['should', 'could', 'would', 'will', 'might', 'must', 'can', 'cannot'])} {rng.choice(V_INTRANS)} {rng.choice(ADV + TIMES)} because {rng.choice(['it is', 'it was', 'the weather is', 'the day was', 'everything is'])} {rng.choice(ADJ)}."
    if k == 9:
        return f"Please {rng.choice(V_THING)} {_obj_thing(rng)} when you {rng.choice(V_INTRANS)}."
    if k == 10:
        return f"{_cap(rng.choice(ABSTRACT))} is {rng.choice(ADV)} {rng.choice(ADJ)} {rng.choice(['for', 'to'])} {rng.choice(['me', 'us', 'them', 'him', 'her', 'you', 'everyone', 'most people', 'the children'])}."
    if k == 11:
        return f"{_cap(subj)} {'has' if third else 'have'} {rng.choice(['never', 'already', 'just', 'always', 'not yet', 'often'])} {_pp(rng.choice(V_THING + V_IDEA))} {_obj_idea(rng) if rng.random() < 0.5 else _obj_thing(rng)}."
    if k == 12:
        return f"{_cap(_when(rng))} {subj} {_past(rng.choice(V_INTRANS))} {rng.choice(['at', 'in', 'near', 'outside', 'behind'])} {_place(rng)}."
    if k == 13:
        return f"If {subj} {_verb_present(rng.choice(V_THING), third, subj)} {_obj_thing(rng)}, {rng.choice(['we', 'I', 'they', 'you'])} will {rng.choice(V_INTRANS)} {rng.choice(TIMES)}."
    if k == 14:
        return f"My {rng.choice(PEOPLE)} {rng.choice(['lives', 'works', 'stays', 'grew up', 'was born', 'studied'])} in {_place(rng)} {rng.choice(['near', 'in', 'with', 'far from', 'close to'])} {_place(rng)}."
    if k == 15:
        aux = rng.choice(["does" if third else "do", "did", "will", "should"])
        return f"What {rng.choice(['kind of', 'part of the', 'size of'])} {rng.choice(COUNT_ABSTRACT + THINGS)} {aux} {subj} {rng.choice(['need', 'want', 'like', 'choose', 'get', 'use', 'start'])}?"
    if k == 16:
        return f"{_cap(subj)} {_past(rng.choice(['tell', 'ask', 'show', 'give', 'send', 'teach', 'pay', 'help', 'call', 'meet', 'visit', 'thank']))} {rng.choice(['me', 'us', 'them', 'him', 'her', 'you'] + MEN + WOMEN)} {rng.choice(['about', 'during', 'after', 'before'])} {_obj_idea(rng)}."
    if k == 17:
        return f"{rng.choice(['Let me know', 'Tell me', 'Ask them', 'I wonder', 'Nobody knows', 'Do you know', 'I am not sure'])} {rng.choice(['if', 'whether', 'why', 'when', 'where', 'how'])} {subj} {_past(rng.choice(V_THING))} {_obj_thing(rng)}."
    if k == 18:
        return f"{_cap(subj)} {'was' if third or subj == 'I' else 'were'} {rng.choice(['too', 'so', 'very', 'really', 'quite', 'not', 'still', 'always'])} {rng.choice(ADJ)} to {rng.choice(V_INTRANS)}."
    if k == 19:
        return f"The {rng.choice(GROUPS)} {rng.choice(['said', 'announced', 'reported', 'decided', 'agreed'])} that {rng.choice(['it', 'they', 'the ' + rng.choice(PEOPLE_PL)])} would {rng.choice(V_IDEA)} {_obj_idea(rng)} {_when(rng)}."
    if k == 20:
        return f"{rng.choice(['Most', 'Many', 'Some', 'All', 'Few', 'Several', 'Both'])} {rng.choice(PEOPLE_PL)} {rng.choice(['in', 'from', 'at'])} {_place(rng)} {rng.choice(['like', 'need', 'want', 'know', 'remember', 'enjoy', 'hate'])} {_obj_idea(rng)}."
    if k == 21:
        f = rng.choice(FOODS)
        return f"{rng.choice(['We', 'They', 'I', 'My family', 'The kids', 'Everyone'])} {rng.choice(['had', 'ate', 'made', 'bought', 'wanted', 'cooked'])} {f} for {rng.choice(['dinner', 'lunch', 'breakfast'])}, {rng.choice(['and', 'but', 'so'])} {rng.choice(['it was', 'the ' + f + ' was'])} {rng.choice(ADJ)}."
    if k == 22:
        return f"{_cap(rng.choice(FOODS))} is ready, so {rng.choice(['please', 'come and', 'let us'])} {rng.choice(['sit down', 'eat', 'wash your hands', 'get a plate', 'stop working'])}."
    if k == 23:
        return f"{rng.choice(['Turn', 'Go', 'Walk', 'Drive', 'Look'])} {rng.choice(['left', 'right', 'straight ahead', 'back', 'down', 'up', 'around'])} {rng.choice(['at', 'after', 'near', 'past'])} {_place(rng)}."
    if k == 24:
        return f"{rng.choice(['Wait', 'Stay', 'Sit', 'Stand', 'Stop'])} {rng.choice(['here', 'there', 'outside', 'inside'])} until {rng.choice(['I', 'we', 'she', 'he', 'they'])} {rng.choice(['come back', 'get there', 'call you', 'finish', 'find it'])}."
    if k == 25:
        return f"{rng.choice(['Everyone', 'Nobody', 'Someone', 'Anyone', 'Everybody', 'No one'])} {rng.choice(['was', 'seemed', 'looked', 'felt'])} {rng.choice(ADJ)} when {rng.choice(['the', 'our', 'their'])} {rng.choice(COUNT_ABSTRACT)} {_past(rng.choice(['come', 'begin', 'end', 'start', 'change', 'happen']))}."
    if k == 26:
        return f"Her {rng.choice(PEOPLE_PL)} {_past(rng.choice(V_THING))} {_obj_thing(rng)} for {rng.choice(['her', 'his', 'their', 'our'])} {rng.choice(['birthday', 'party', 'wedding', 'trip', 'new job', 'holiday'])}."
    if k == 27:
        return f"This is {rng.choice(['the first', 'the last', 'the only', 'the best', 'not the'])} {rng.choice(COUNT_ABSTRACT + THINGS)} {rng.choice(['I', 'we', 'they', 'you'])} have {_pp(rng.choice(V_THING + V_IDEA))}."
    if k == 28:
        return f"{rng.choice(['Yes', 'No', 'Oh', 'Well', 'Okay', 'Thanks', 'Sorry', 'Hey'])}, {subj} {_verb_present(rng.choice(['think', 'know', 'feel', 'guess', 'hope', 'mean', 'say', 'believe']), third, subj)} {rng.choice(['so', 'it is ' + rng.choice(ADJ), 'that is ' + rng.choice(ADJ), 'we should ' + rng.choice(V_INTRANS)])}."
    nat = rng.choice(NATIONALITY)
    return f"{rng.choice(['The', 'An' if nat[0] in 'AEIOU' else 'A'])} {nat} {rng.choice(PEOPLE + GROUPS)} {_past(rng.choice(V_IDEA))} {_obj_idea(rng)} {rng.choice(['in', 'near', 'from'])} {rng.choice(CITIES)}."


EXTRA = [
    "Be careful, or you will fall off the {thing}.",
    "Who is going to give the talk, and which room is it in?",
    "It was more than we needed, so we gave some away.",
    "She went over the bridge and through the forest.",
    "Did you have any trouble getting there?",
    "There is not much time left, so something has to change.",
    "He walked between the cars and into another street.",
    "Each of them had a place to sleep without paying.",
    "Mr Brown was against the plan from the start.",
    "Have you ever been to {place}?",
    "What are you doing this weekend?",
    "I was thinking about what you said.",
    "Having a dog is a lot of work.",
    "I am getting tired of waiting for the bus.",
    "God knows what they were looking for.",
    "Take care of yourself, and call me when you get home.",
    "Thank you for everything you have done.",
    "There was nothing I could do about it, though.",
    "Is there anything I can do for you?",
    "Making friends is easy for some people and hard for others.",
    "Four of us were there, including {name}.",
    "The news was based on what the police said.",
    "He put his hand on his head and closed his eyes.",
    "The price is less than half of what we paid last time.",
    "At least five people were hurt in the attack.",
    "Within a few minutes, the room was empty.",
    "The war lasted six years and killed a million people.",
    "His face turned red and his heart was beating fast.",
    "Coming home after a long day feels good.",
    "She has become the best player on the team.",
    "My body hurts after running up the hill.",
    "They live in the south, near the sea, and we live in the north.",
    "He drove along the river to the east of the city.",
    "Yeah, I know, but what else can we do?",
    "It looks like it comes from somewhere else.",
    "It happened months ago, because of a mistake.",
    "The series ends in the third season.",
    "Either you come with us, or you stay here.",
    "Among all the books, this one is my favourite.",
    "For further information, visit our website.",
    "I did it myself, and you can do it yourself too.",
    "Although it was late, we kept talking.",
    "According to the report, the cost went up in the west.",
    "He lives by himself in a small house.",
    "I am gonna meet {name} after work.",
    "The points and results are on the board.",
    "The team took action and the problem was solved.",
    "The self service shop is open all night.",
    "We must work out the rest of the plan together.",
    "The football team scored three goals in the second half.",
    "There are seven days in a week and ten players in the game.",
    "She got married last summer, and he is married too.",
    "Is the TV on? I want to watch the news.",
    "Read the rules before you start playing.",
    "Whose bag is this? Is it mine or yours?",
    "They moved towards the door below the stairs.",
    "The company sells products and services online.",
    "The internet changed the way we trade and talk.",
    "These are the ones I like, and those are the ones I don't.",
    "Prices went up by ten percent in some places.",
    "It rained a lot this year, and the land was green.",
    "The star of the show was a young girl.",
    "Everyone has the right to vote in the election.",
    "The military and the police were involved in the fight.",
    "My hair is too long, so I need a cut.",
    "The earth turns around the sun once a year.",
    "Sign here and write your name below the line.",
    "Sir, your table is ready.",
    "The total was higher than the average.",
    "The longer you wait, the harder it gets.",
    "The rules are complete, and they are related to the terms of the deal.",
    "He shot the ball and it hit the wall.",
    "Turn off the light when you leave.",
    "Is this seat free? Yes, nobody is sitting here.",
    "The house is worth a lot of money.",
    "Currently there are no new events on the list.",
    "They gave the money to {name}, who gave it to the school.",
    "Upon arriving, we checked into the hotel.",
    "The lord of the castle had a super big horse.",
    "The story was published in the paper on Sunday.",
    "Whatever happens, stay calm and trust me.",
    "Various groups came from different countries.",
    "Its position on the map was wrong.",
    "Writing a letter takes more time than sending a message.",
    "The questions were about tax, trade and property.",
    "We sat around the table, feeling happy.",
    "The chief of police gave a talk about security.",
    "Okay, let's go. Ok, see you later.",
    "They themselves did not know what was going on.",
    "It is a lower price, and the quality is almost the same.",
    "The star was bright, and the stage was dark.",
    "Those are different issues, and we have other problems.",
    "The couple bought a new house last year.",
    "He gives his time to help others.",
    "These cases are different from those.",
    "There are many ways to solve this problem.",
    "Seeing is believing, as people say.",
    "We went round the corner and saw the sea.",
    "The website was down, so we could not check.",
    "Can you forward me the email?",
    "It may rain later, so take a coat.",
    "Being late is not such a big deal.",
    "She set the table and thought about the day.",
    "Many times the United States and other states agreed.",
    "The following day, the price per ticket went up.",
    "Given the cause, the delay was due to the weather.",
    "Act now, or the force of the wind goes up.",
    "People have rights, and companies have rules.",
    "I wish you had not gone so far.",
    "Some areas became too dry above the river.",
    "The problem itself is small.",
    "The cold can kill plants in the winter.",
    "Most schools close in the summer.",
]


def everyday(rng: random.Random, n: tuple[int, int] = (3, 7)) -> str:
    """A short paragraph of everyday sentences."""
    return " ".join(_frame(rng) for _ in range(rng.randint(*n)))


# ----------------------------------------------------------------------------
# pronouns whose next word depends on the antecedent

ANIMAL_DOES = {
    "cat": ["meowed", "purred", "slept on the bed"],
    "dog": ["barked", "wagged its tail", "ran after the ball"],
    "bird": ["sang", "flew away", "built a nest"],
    "cow": ["mooed", "ate the grass"],
    "duck": ["quacked", "swam in the pond"],
    "horse": ["neighed", "ran across the field"],
    "lion": ["roared", "hunted"],
    "snake": ["hissed", "slid under a stone"],
    "bee": ["buzzed", "made honey"],
    "frog": ["croaked", "jumped into the pond"],
    "sheep": ["said baa", "ate the grass"],
    "owl": ["hooted", "flew into the night"],
    "pig": ["rolled in the mud", "ate the apples"],
    "mouse": ["squeaked", "ate the cheese"],
}
THING_DOES = {
    "glass": ["broke into pieces", "was full of water"],
    "ball": ["bounced", "rolled under the car"],
    "phone": ["rang", "needed a new battery"],
    "car": ["would not start", "needed petrol"],
    "clock": ["ticked", "stopped at midnight"],
    "kite": ["flew high", "got stuck in a tree"],
    "cake": ["tasted sweet", "was too hot to eat"],
    "door": ["creaked", "was locked"],
    "lamp": ["gave a soft light", "needed a new bulb"],
    "bell": ["rang", "was loud"],
    "book": ["had many pages", "was about a king"],
    "letter": ["came from his sister", "was written by hand"],
    "boat": ["floated on the lake", "sank"],
    "train": ["was late", "left the station"],
}
ANIMAL_STATE = ["hungry", "tired", "happy", "cold", "scared", "old", "small", "big", "lost", "sleepy"]
# each person's thing and what one does with it
PERSON_THING = {
    "kite": "flew",
    "drum": "played",
    "guitar": "played",
    "bike": "rode",
    "book": "read",
    "cake": "ate",
    "ball": "kicked",
    "letter": "wrote",
    "car": "drove",
    "camera": "used",
    "phone": "answered",
    "horse": "rode",
    "piano": "played",
    "picture": "painted",
    "song": "sang",
    "boat": "sailed",
}
JOBS = {
    "doctor": "helped the sick man",
    "teacher": "taught the class",
    "cook": "made dinner",
    "pilot": "flew the plane",
    "farmer": "fed the cows",
    "driver": "drove the bus",
    "singer": "sang a song",
    "writer": "wrote a book",
    "nurse": "helped the doctor",
    "painter": "painted the wall",
}


def _names(rng: random.Random) -> tuple[str, str, str, str, str, str]:
    """Two people of different genders, in random order: (a, a_he, a_his, b, b_he, b_his)."""
    m, w = rng.choice(MEN), rng.choice(WOMEN)
    pm, pw = ("he", "his"), ("she", "her")
    if rng.random() < 0.5:
        return m, *pm, w, *pw
    return w, *pw, m, *pm


def pronoun_it(rng: random.Random) -> dict:
    """An animal or a thing, a person as a distractor, then "It" with the animal's own verb."""
    if rng.random() < 0.6:
        noun = rng.choice(sorted(ANIMAL_DOES))
        does = rng.choice(ANIMAL_DOES[noun])
        first = rng.choice(
            [
                f"The {noun} was {rng.choice(ANIMAL_STATE)}.",
                f"{rng.choice(MEN + WOMEN)} saw a {noun} in the {rng.choice(['park', 'garden', 'field', 'street'])}.",
                f"{rng.choice(MEN + WOMEN)} had a {rng.choice(ANIMAL_STATE)} {noun}.",
                f"There was a {noun} near the {rng.choice(['house', 'river', 'school', 'road'])}.",
                f"My {noun} was {rng.choice(ANIMAL_STATE)} this morning.",
            ]
        )
    else:
        noun = rng.choice(sorted(THING_DOES))
        does = rng.choice(THING_DOES[noun])
        first = rng.choice(
            [
                f"{rng.choice(MEN + WOMEN)} found a {noun} on the table.",
                f"The {noun} was {rng.choice(['old', 'new', 'red', 'blue', 'big', 'small'])}.",
                f"{rng.choice(MEN + WOMEN)} looked at the {noun} for a long time.",
                f"There was a {noun} in the {rng.choice(['kitchen', 'room', 'garden', 'shop'])}.",
            ]
        )
    pro = rng.choice(["It", "Then it", "Suddenly it", "After a while it"])
    return {"text": f"{first} {pro} {does}.", "antecedent": noun, "pronoun": pro.split()[-1], "kind": "it"}


def pronoun_people(rng: random.Random) -> dict:
    """Two people of different genders, each with their own thing (or job); then "He"/"She"
    and what that person does with their own thing."""
    a, a_he, a_his, b, b_he, b_his = _names(rng)
    if rng.random() < 0.6:
        ta, tb = rng.sample(sorted(PERSON_THING), 2)
        first = rng.choice(
            [
                f"{a} had a {ta} and {b} had a {tb}.",
                f"{a} got a {ta} and {b} got a {tb}.",
                f"{a} brought a {ta}, and {b} brought a {tb}.",
            ]
        )
        mid = rng.choice(
            ["", f" They met in the {rng.choice(['park', 'garden', 'street', 'school'])}.", " It was a sunny day."]
        )
        who, he, his, t = rng.choice([(a, a_he, a_his, ta), (b, b_he, b_his, tb)])
        own = t
        text = f"{first}{mid} {_cap(he)} {PERSON_THING[t]} {his} {t}."
    else:
        ja, jb = rng.sample(sorted(JOBS), 2)
        first = rng.choice(
            [
                f"{a} is {_a(ja)} and {b} is {_a(jb)}.",
                f"{a} works as {_a(ja)}, and {b} works as {_a(jb)}.",
                f"{a} was {_a(ja)}. {b} was {_a(jb)}.",
            ]
        )
        mid = rng.choice(["", f" {a} met {b} in the {rng.choice(['park', 'town', 'shop'])}.", " One day they met."])
        who, he, his, j = rng.choice([(a, a_he, a_his, ja), (b, b_he, b_his, jb)])
        own = j
        text = f"{first}{mid} {_cap(he)} {JOBS[j]}."
    return {"text": text, "antecedent": who, "pronoun": _cap(he), "kind": "he_she", "own": own}


def pronoun_they(rng: random.Random) -> dict:
    """A group and a single thing: "they" is the group (plural verb and their thing)."""
    group = rng.choice(["The children", "The boys", "The girls", "My friends", "The students", "Our neighbours"])
    noun = rng.choice(sorted(ANIMAL_DOES))
    return {
        "text": f"{group} saw a {noun}. They {rng.choice(['were happy', 'laughed', 'took a picture of it', 'ran home'])}. It {rng.choice(ANIMAL_DOES[noun])}.",
        "kind": "they",
    }


def pronoun_story(rng: random.Random) -> str:
    """A few pronoun sentences, one after another."""
    parts = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.45:
            parts.append(pronoun_it(rng)["text"])
        elif r < 0.9:
            parts.append(pronoun_people(rng)["text"])
        else:
            parts.append(pronoun_they(rng)["text"])
    return " ".join(parts)


def pronoun_eval_set(seed: int = 90_210, n: int = 240) -> dict[str, list[dict]]:
    """Held-out single pronoun sentences (a seed training never uses): n for "it" after an
    animal or thing, n for he/she between two people of different genders."""
    rng = random.Random(seed)
    return {
        "it": [pronoun_it(rng) for _ in range(n)],
        "he_she": [pronoun_people(rng) for _ in range(n)],
    }
